import Foundation
import GatePassCore

// A visitor's management keys for an owner or admin: cancel, check out, the invitation, and
// the pass drawn in the terminal so the kiosk can scan it from the screen.

extension VisitorDetailScreen {
    /// An action that asks y/n before it is sent.
    public enum ManagementAction: Sendable, Equatable {
        case cancel, checkOut, invite
    }

    /// The pass view: the QR drawn with half blocks, or why it cannot be.
    public struct PassView: Sendable, Equatable {
        public var code: PassCode?
        public var problem: String?
        /// How the last save went.
        public var saved: Result?
    }

    static let managementKeys: [(key: String, action: String)] = [
        ("c", "cancel the visit (after y/n)"), ("o", "check the visitor out (after y/n)"),
        ("i", "send or resend the invitation mail (after y/n)"), ("p", "show the pass (its QR code)"),
    ]

    var managementKeyHelp: [(key: String, action: String)]? {
        if pass != nil {
            return [("s", "save the pass as a PNG in the current folder (mode 0600)"), ("Esc", "back to the visitor")]
        }
        if confirmation != nil { return [("y", "yes, send it"), ("n, Esc", "no, nothing is sent")] }
        return nil
    }

    /// Looks up the names behind the visitor's ids — who decided, the assigned approver, the
    /// gate — for an owner or admin (best effort: an id is shown otherwise). The users are read
    /// once per id not yet known, so events about the visitor do not read them again each time.
    func resolveNames() {
        guard let management else { return }
        let people = [visitor.decidedBy, visitor.approverId].compactMap { $0 }
        if people.contains(where: { userNames[$0] == nil && !namesLookedUp.contains($0) }) {
            userNames.merge(management.userNames()) { _, new in new }
            namesLookedUp.formUnion(people)
        }
        if let gate = visitor.checkpointId, gateNames[gate] == nil, !namesLookedUp.contains(gate) {
            gateNames = management.gateNames()
            namesLookedUp.insert(gate)
        }
    }

    /// The person behind a user id, by name: from the users list (an owner or admin), the
    /// logged-in user's own name (an approver who decided, or the approver assigned), else
    /// "another user" for an approver, who may not read the users list, and the id for an
    /// owner or admin whose list does not have it (a user since removed), to look up.
    func personName(_ id: String) -> String {
        if let name = userNames[id] { return name }
        if let me = services.currentUser(), me.id == id { return me.name }
        return management == nil ? "another user" : id
    }

    // MARK: - Keys

    /// The management keys; nil for any other key.
    func handleManagementKey(_ key: Key) -> ScreenAction? {
        switch key {
        case .character("c"): return ask(.cancel)
        case .character("o") where rights.checksOut: return ask(.checkOut)
        case .character("i"): return ask(.invite)
        case .character("p"): return openPass()
        default: return nil
        }
    }

    /// Why `action` cannot be done for the visitor as it stands, or nil.
    func refusal(of action: ManagementAction) -> String? {
        let status = Self.describe(visitor.status)
        switch action {
        case .cancel:
            if [.cancelled, .checkedOut].contains(visitor.status) { return "Nothing to cancel: the visitor is \(status)." }
            if visitor.status == .checkedIn { return "The visitor is inside: check them out (o) instead of cancelling." }
        case .checkOut:
            if visitor.status != .checkedIn { return "Only a visitor who is checked in can be checked out; this one is \(status)." }
        case .invite:
            if (visitor.email ?? "").isEmpty { return "No invitation without the visitor's email; this visitor has none." }
            if [.cancelled, .checkedOut].contains(visitor.status) { return "No invitation for a visitor who is \(status)." }
        }
        return nil
    }

    private func ask(_ action: ManagementAction) -> ScreenAction {
        if let refusal = refusal(of: action) {
            result = Result(kind: .warning, text: refusal)
            return .redraw
        }
        confirmation = action
        return .redraw
    }

    func confirmationQuestion(_ action: ManagementAction) -> String {
        switch action {
        case .cancel: "Cancel the visit of \(visitor.name)? The pass stops working. y/n"
        case .checkOut: "Check \(visitor.name) out now? y/n"
        case .invite: "Send the invitation to \(visitor.email ?? "")? A new pass page; an earlier one stops working. y/n"
        }
    }

    func handleConfirmation(_ key: Key) -> ScreenAction {
        guard let action = confirmation, let management else { return .none }
        switch key {
        case .character("y"), .character("Y"):
            confirmation = nil
            return carryOut(action, with: management)
        case .character("n"), .character("N"), .escape:
            confirmation = nil
            result = Result(kind: .warning, text: "Nothing was sent.")
            return .redraw
        case .resize:
            return .redraw
        default:
            return .none
        }
    }

    private func carryOut(_ action: ManagementAction, with management: any VisitorsServices) -> ScreenAction {
        do {
            switch action {
            case .cancel:
                visitor = try management.cancelVisitor(id: visitor.id)
                result = Result(kind: .ok, text: "Cancelled: the pass no longer admits.")
            case .checkOut:
                visitor = try management.checkOutVisitor(id: visitor.id)
                result = Result(kind: .ok, text: "Checked out.")
            case .invite:
                let page = try management.inviteVisitor(id: visitor.id)
                result = Result(kind: .ok, text: "Invitation queued for \(visitor.email ?? "the visitor"); pass page \(page)")
            }
            return .redraw
        } catch {
            let verb = switch action {
            case .cancel: "Not cancelled"
            case .checkOut: "Not checked out"
            case .invite: "Not sent"
            }
            result = Result(kind: .error, text: "\(verb): \(error.sentence)")
            return .alert
        }
    }

    // MARK: - The pass

    private func openPass() -> ScreenAction {
        guard let management else { return .none }
        do {
            pass = PassView(code: try management.passCode(for: visitor))
        } catch {
            pass = PassView(problem: "The pass code could not be drawn: \(error.sentence)")
        }
        return .redraw
    }

    func handlePass(_ key: Key) -> ScreenAction {
        guard var view = pass, let management else { return .none }
        switch key {
        case .escape, .character("q"):
            pass = nil
            return .redraw
        case .character("s"):
            do {
                let path = try management.savePassPNG(for: visitor)
                view.saved = Result(kind: .ok, text: "Saved \(path) (readable by you only).")
            } catch {
                view.saved = Result(kind: .error, text: "Not saved: \(error.sentence)")
            }
            pass = view
            return .redraw
        case .resize:
            return .redraw
        default:
            return .none
        }
    }

    /// What the pass view needs around the code: the title row and the short id under it.
    static let passChromeRows = 2

    func renderPass(_ view: PassView, into canvas: inout Canvas, area: Area) {
        var footer: [(String, Canvas.Style)] = []
        if let saved = view.saved { footer.append((saved.text, saved.kind.style)) }
        footer.append(("s: save the pass as PNG in the current folder · Esc: back", .dim))
        var cursor = LineCursor(area: area, bottom: canvas.putFooter(footer, in: area))
        func line(_ text: String, _ style: Canvas.Style) { cursor.line(text, style, on: &canvas) }
        line("Pass of \(visitor.name) · valid \(validityText)", .title)
        if [.cancelled, .checkedOut, .rejected].contains(visitor.status) {
            line("This pass no longer admits: the visitor is \(Self.describe(visitor.status)).", Canvas.Style(.warning, bold: true))
        }
        guard let code = view.code else {
            line(view.problem ?? "No pass code.", Canvas.Style(.danger, bold: true))
            return
        }
        // The signed code when it fits; else a smaller form of the same pass, said so.
        let choices = [code] + code.smaller
        let fits = { (candidate: PassCode, extraRows: Int) -> Bool in
            let rows = candidate.halfBlockRows()
            return (rows.first?.count ?? 0) <= area.width && rows.count + 1 + extraRows <= cursor.rowsLeft
        }
        guard let chosen = choices.enumerated().first(where: { fits($0.element, $0.offset == 0 ? 0 : 1) })?.element else {
            let rows = code.halfBlockRows()
            let codeWidth = rows.first?.count ?? 0
            line("The terminal is too small for the pass code: it needs \(codeWidth) columns and \(rows.count + Self.passChromeRows + footer.count) rows, "
                 + "this one has \(area.width)×\(area.height).", Canvas.Style(.warning, bold: true))
            line("Make the terminal larger, or press s to save the pass as a PNG in the current folder.", .plain)
            line("Short id: \(visitor.shortId.rawValue)", Canvas.Style(.normal, bold: true))
            return
        }
        if chosen != code {
            line("Unsigned form (\(code.halfBlockRows().count + Self.passChromeRows + footer.count) rows needed for the signed one): "
                 + "offline kiosks accept it only if they cached the pass.", Canvas.Style(.warning))
        }
        let rows = chosen.halfBlockRows()
        let codeWidth = rows.first?.count ?? 0
        let left = area.x + (area.width - codeWidth) / 2
        for (offset, row) in rows.enumerated() {
            canvas.put(row, x: left, y: cursor.y + offset, style: Canvas.Style(.code))
        }
        let shortId = visitor.shortId.rawValue
        canvas.put(shortId, x: area.x + max(0, (area.width - shortId.count) / 2), y: cursor.y + rows.count,
                   style: Canvas.Style(.normal, bold: true), maxWidth: area.width)
    }
}

extension PassCode {
    /// The code as rows of half blocks, two modules per character cell vertically: `▀` a dark
    /// module above a light one, `▄` the other way, `█` both dark, a space both light. The
    /// `quietZone` (4 modules, as the QR standard asks) is light all round.
    public func halfBlockRows(quietZone: Int = 4) -> [String] {
        let side = size + 2 * quietZone
        func dark(_ x: Int, _ y: Int) -> Bool {
            let (column, row) = (x - quietZone, y - quietZone)
            guard column >= 0, column < size, row >= 0, row < size else { return false }
            return isDark(x: column, y: row)
        }
        return stride(from: 0, to: side, by: 2).map { top in
            String((0..<side).map { x -> Character in
                switch (dark(x, top), dark(x, top + 1)) {
                case (true, true): "█"
                case (true, false): "▀"
                case (false, true): "▄"
                case (false, false): " "
                }
            })
        }
    }
}
