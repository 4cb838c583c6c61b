import Foundation
import GatePassCore

/// One visitor with the approval context; `a` approves and `r` rejects, each after a
/// prompt for an optional note (Enter sends, an empty note included; Esc cancels).
///
/// ```
/// Ana Pop — awaiting approval
/// Short id       K7Q2M9XD
/// Company        Acme
/// …
/// Previous visits 3 (last 2025-01-10 09:12)
/// Requested at   Main gate
///
/// Approve Ana Pop? Note (optional): on time_
/// Enter: send · Esc: cancel
/// ```
public final class VisitorDetailScreen: ConsoleScreen {
    /// The note prompt while it is open.
    public struct Prompt: Sendable, Equatable {
        public var decision: ApprovalDecision
        var note: TextInput
        public var noteText: String { note.text }
    }

    /// The line that says how the last action went.
    public struct Result: Sendable, Equatable {
        public typealias Kind = OutcomeKind
        public var kind: Kind
        public var text: String
    }

    /// Longest note the prompt takes.
    public static let noteLimit = 1_000

    /// What the viewer's role may do beyond reading and managing (a HOST may neither decide
    /// nor check out: the server would refuse, so the keys are not offered).
    public struct Rights: Sendable, Equatable {
        public var decides: Bool
        public var checksOut: Bool
        public init(decides: Bool = true, checksOut: Bool = true) { self.decides = decides; self.checksOut = checksOut }
    }

    let services: any ConsoleServices
    let clock: () -> Date
    /// The organization's clock: every time on the screen is read in its zone.
    let siteClock: SiteClock
    private let onDecision: ((String, DecisionOutcome) -> Void)?
    /// For OWNER/ADMIN: cancel, check out, the invitation and the pass (nil: those keys do
    /// not exist, as for an approver).
    let management: (any VisitorsServices)?
    let rights: Rights

    public internal(set) var visitor: Visitor
    public private(set) var context: ApprovalContext?
    /// When the detail was read and whether the cache answered; nil until it was read.
    public private(set) var loaded: (updatedAt: Date, fromCache: Bool)?
    public private(set) var loadError: String?
    public private(set) var prompt: Prompt?
    public internal(set) var result: Result?
    /// The y/n question of a management action while it is open.
    public internal(set) var confirmation: ManagementAction?
    /// The pass view while it is open.
    public internal(set) var pass: PassView?
    /// Names of users and gates by id, for an owner or admin (who decided, the approver, the gate).
    public internal(set) var userNames: [String: String] = [:]
    public internal(set) var gateNames: [String: String] = [:]
    /// Ids already looked up (found or not), so they are not looked up again.
    var namesLookedUp: Set<String> = []
    /// The first line of the details drawn (Up/Down scroll when they do not fit).
    public private(set) var scroll = 0
    private var lastDetailRows = 0

    /// - Parameters:
    ///   - visitor: the visitor as the list knows it; shown until (or if) the detail loads.
    ///   - clock: "now", for how long ago things happened.
    ///   - siteClock: the organization's zone, which every time is shown in.
    ///   - onDecision: told every decision's outcome (the shell updates the approvals list).
    ///   - management: the Visitors services, for an owner or admin.
    public init(visitor: Visitor, services: any ConsoleServices, clock: @escaping () -> Date = Date.init,
                siteClock: SiteClock, onDecision: ((String, DecisionOutcome) -> Void)? = nil,
                management: (any VisitorsServices)? = nil, rights: Rights = Rights()) {
        self.visitor = visitor
        self.rights = rights
        self.services = services
        self.clock = clock
        self.siteClock = siteClock
        self.onDecision = onDecision
        self.management = management
    }

    public var title: String { "Visitor" }

    public var isCapturingText: Bool { prompt != nil || confirmation != nil || pass != nil }

    public var keyHelp: [(key: String, action: String)] {
        if prompt != nil {
            return [("Enter", "send the decision with this note (it may be empty)"),
                    ("Esc", "cancel"),
                    ("Backspace", "delete the last character")]
        }
        if let help = managementKeyHelp { return help }
        return (rights.decides ? [("a", "approve, with an optional note"), ("r", "reject, with an optional note")] : [])
            + (management == nil ? [] : Self.managementKeys.filter { rights.checksOut || $0.key != "o" })
            + [("Up, k / Down, j", "scroll"),
               ("Home, End", "top or bottom"),
               ("Esc", "back to the list")]
    }

    /// Whether the visitor can still be approved or rejected (api.md: AWAITING_APPROVAL, or
    /// EXPECTED with requiresApproval).
    public var isDecidable: Bool {
        visitor.status == .awaitingApproval || (visitor.status == .expected && visitor.requiresApproval)
    }

    // MARK: - Loading and events

    /// Set by `init(detail:…)`: the detail was just read, so the first `appear` does not read it again.
    private var readOnOpen = false

    /// A detail screen over a detail already read (a visitor opened from the history or the
    /// scan screen, which the shell had to read first to have a visitor to show).
    public convenience init(detail: ConsoleRead<VisitorDetail>, services: any ConsoleServices,
                            clock: @escaping () -> Date = Date.init, siteClock: SiteClock,
                            onDecision: ((String, DecisionOutcome) -> Void)? = nil, management: (any VisitorsServices)? = nil,
                            rights: Rights = Rights()) {
        self.init(visitor: detail.value.visitor, services: services, clock: clock, siteClock: siteClock, onDecision: onDecision,
                  management: management, rights: rights)
        context = detail.value.context
        loaded = (detail.updatedAt, detail.fromCache)
        readOnOpen = true
    }

    public func appear() -> ScreenAction {
        resolveNames()
        if readOnOpen {
            readOnOpen = false
            return .redraw
        }
        do {
            let read = try services.visitorDetail(id: visitor.id)
            visitor = read.value.visitor
            context = read.value.context
            loaded = (read.updatedAt, read.fromCache)
            loadError = nil
            resolveNames()
        } catch {
            loadError = "Could not load everything about this visitor. " + error.sentence
        }
        return .redraw
    }

    public func receive(_ event: ServerEvent) -> ScreenAction {
        guard let kind = event.kind, kind.carriesVisitor, case .visitor(let data)? = try? event.payload(),
              data.visitor.id == visitor.id else { return .none }
        visitor = data.visitor
        resolveNames()
        if prompt != nil && !isDecidable {
            prompt = nil
            result = Result(kind: .warning, text: "Someone else decided first: the visitor is now \(Self.describe(visitor.status)).")
        }
        return .redraw
    }

    // MARK: - Keys

    public func handle(_ key: Key) -> ScreenAction {
        if prompt != nil { return handlePrompt(key) }
        if pass != nil { return handlePass(key) }
        if confirmation != nil { return handleConfirmation(key) }
        if management != nil, let action = handleManagementKey(key) { return action }
        // The details scroll as text (no row is selected), by the list keys; a page is 10 lines.
        if let target = ListSelection.target(of: key, from: scroll, pageSize: 10, last: Int.max) { return scroll(to: target) }
        switch key {
        case .character("a") where rights.decides: return openPrompt(.approve)
        case .character("r") where rights.decides: return openPrompt(.reject)
        case .escape: return .back
        case .resize: return .redraw
        default: return .none
        }
    }

    private func scroll(to line: Int) -> ScreenAction {
        let target = max(0, min(line, max(0, detailLines().count - lastDetailRows)))
        guard target != scroll else { return .none }
        scroll = target
        return .redraw
    }

    private func openPrompt(_ decision: ApprovalDecision) -> ScreenAction {
        guard isDecidable else {
            result = Result(kind: .warning, text: "Nothing to decide: the visitor is \(Self.describe(visitor.status)).")
            return .redraw
        }
        prompt = Prompt(decision: decision, note: TextInput(limit: Self.noteLimit))
        return .redraw
    }

    private func handlePrompt(_ key: Key) -> ScreenAction {
        guard var current = prompt else { return .none }
        switch key {
        case .escape:
            prompt = nil
            result = Result(kind: .warning, text: "Cancelled: nothing was sent.")
            return .redraw
        case .enter:
            prompt = nil
            return submit(current.decision, note: current.note.text)
        case .backspace, .delete:
            guard current.note.deleteBackward() else { return .none }
        case .control("u"):
            current.note.text = ""
        case .character(let character):
            guard current.note.insert(character) else { return .none }
        case .resize:
            return .redraw
        default:
            return .none
        }
        prompt = current
        return .redraw
    }

    private func submit(_ decision: ApprovalDecision, note: String) -> ScreenAction {
        let trimmed = note.trimmingCharacters(in: .whitespaces)
        let outcome = services.decide(decision, visitorId: visitor.id, note: trimmed.isEmpty ? nil : trimmed)
        switch outcome {
        case .applied(let updated):
            visitor = updated
            result = Result(kind: .ok, text: decision == .approve ? "Approved." : "Rejected.")
        case .queued:
            result = Result(kind: .warning, text: "Queued, will be sent when the server is back.")
        case .refused(let message):
            result = Result(kind: .error, text: "Not \(decision == .approve ? "approved" : "rejected"): \(message)")
        case .needsLogin(let message):
            result = Result(kind: .error, text: "Your session has ended (\(message)). Log in again; the decision stays queued and is sent after the login.")
        }
        onDecision?(visitor.id, outcome)
        if case .refused = outcome { return .alert }
        return .redraw
    }

    // MARK: - Drawing

    static func describe(_ status: VisitorStatus) -> String {
        switch status {
        case .expected: "expected"
        case .awaitingApproval: "awaiting approval"
        case .approved: "approved"
        case .rejected: "rejected"
        case .checkedIn: "checked in"
        case .checkedOut: "checked out"
        case .cancelled: "cancelled"
        }
    }

    /// The pass's window with the zone's name: `06 Dec 2026 00:00–23:59 (Europe/Bucharest)`.
    var validityText: String { siteClock.window(from: visitor.validity.from, until: visitor.validity.until) }

    private func when(_ date: Date, now: Date) -> String {
        "\(siteClock.dateTime(date)) (\(ConsoleFormat.age(since: date, now: now)) ago)"
    }

    /// The details as (label, value) lines, in the order drawn.
    func detailLines() -> [(label: String, value: String)] {
        let now = clock()
        var lines: [(String, String)] = [("Short id", visitor.shortId.rawValue),
                                         ("Status", Self.describe(visitor.status))]
        func add(_ label: String, _ value: String?) {
            if let value, !value.isEmpty { lines.append((label, value)) }
        }
        add("Company", visitor.company)
        add("Purpose", visitor.purpose)
        add("Host", visitor.hostName)
        add("Host email", visitor.hostEmail)
        add("Email", visitor.email)
        add("Phone", visitor.phone)
        lines.append(("Walk-in", visitor.walkIn ? "yes" : "no"))
        if management != nil {
            // An owner's or admin's approval context (the API gives the counted one to approvers).
            lines.append(("Approval", visitor.requiresApproval ? "an approver decides at the gate" : "not needed"))
            add("Approver", visitor.approverId.map(personName))
        }
        add("Requested", visitor.approvalRequestedAt.map { when($0, now: now) })
        if let context {
            let last = context.lastVisitAt.map { " (last \(siteClock.dateTime($0.date)))" } ?? ""
            lines.append(("Previous visits", "\(context.previousVisits)\(last)"))
            add("Requested at", context.requestedAtCheckpoint?.name)
        }
        lines.append(("Valid", validityText))
        add("Decided", visitor.decidedAt.map { when($0, now: now) })
        add("Decided by", visitor.decidedBy.map(personName))
        add("Note", visitor.decisionNote)
        add("Checked in", visitor.checkedInAt.map { when($0, now: now) })
        if management != nil { add("Gate", visitor.checkpointId.map { gateNames[$0] ?? $0 }) }
        add("Checked out", visitor.checkedOutAt.map { when($0, now: now) })
        lines.append(("Registered", when(visitor.createdAt, now: now)))
        return lines
    }

    public func render(into canvas: inout Canvas, area: Area) {
        guard area.width > 0, area.height > 0 else { return }
        if let pass {
            renderPass(pass, into: &canvas, area: area)
            return
        }
        let now = clock()
        // The bottom: the result, then the prompt or the key hint. Drawn first so they win
        // over the details on a short screen.
        var footer: [(String, Canvas.Style)] = []
        if let result {
            footer.append((result.text, result.kind.style))
        }
        if let prompt {
            let verb = prompt.decision == .approve ? "Approve" : "Reject"
            let label = "\(verb) \(visitor.name)? Note (optional): "
            footer.append((prompt.note.promptLine(label: label, width: area.width), Canvas.Style(.normal, bold: true)))
            footer.append(("Enter: send · Esc: cancel", .dim))
        } else if let confirmation {
            footer.append((confirmationQuestion(confirmation), Canvas.Style(.normal, bold: true)))
            footer.append(("y: yes · n, Esc: no", .dim))
        } else {
            var hint = isDecidable && rights.decides ? "a: approve · r: reject · " : ""
            if management != nil { hint += "c: cancel · " + (rights.checksOut ? "o: check out · " : "") + "i: invitation · p: pass · " }
            footer.append((hint + "Esc: back", .dim))
        }
        let footerTop = canvas.putFooter(footer, in: area)

        var y = area.y
        func line(_ text: String, _ style: Canvas.Style) {
            guard y < footerTop else { return }
            canvas.put(ConsoleFormat.fit(text, width: area.width), x: area.x, y: y, style: style, maxWidth: area.width)
            y += 1
        }
        line("\(visitor.name.isEmpty ? "(no name)" : visitor.name) — \(Self.describe(visitor.status))", .title)
        if let loaded, loaded.fromCache {
            line("Offline: showing what was known \(ConsoleFormat.age(since: loaded.updatedAt, now: now)) ago.",
                 Canvas.Style(.warning, bold: true))
        }
        if let loadError { line(loadError, Canvas.Style(.danger, bold: true)) }
        let lines = detailLines()
        lastDetailRows = max(0, footerTop - y - (footerTop > y ? 1 : 0))
        scroll = max(0, min(scroll, max(0, lines.count - lastDetailRows)))
        let labelWidth = min(16, max(0, area.width / 3))
        for (label, value) in lines.dropFirst(scroll).prefix(lastDetailRows) {
            guard y < footerTop else { break }
            let labelText = ConsoleFormat.fit(label, width: labelWidth - 1)
            canvas.put(labelText, x: area.x, y: y, style: .dim, maxWidth: labelWidth)
            canvas.put(ConsoleFormat.fit(value, width: area.width - labelWidth), x: area.x + labelWidth, y: y,
                       maxWidth: max(0, area.width - labelWidth))
            y += 1
        }
    }
}
