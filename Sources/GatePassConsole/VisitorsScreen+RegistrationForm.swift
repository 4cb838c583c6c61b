import Foundation
import GatePassCore

// The Visitors tab's registration form: every field of the create body, the server's field
// rules checked as each key is typed (`FieldRules`, the rules the server enforces), and
// nothing lost on an error: a refusal or an unreachable server keeps the form as typed.

/// The registration form while it is open.
public struct RegistrationForm: Sendable, Equatable {
    /// The form's fields, in the order shown.
    public enum Field: Int, Sendable, Equatable, CaseIterable {
        case name, email, phone, company, purpose, hostName, hostEmail, approver, requiresApproval, validFrom, validUntil, invite

        public var label: String {
            switch self {
            case .name: "Name"
            case .email: "Email"
            case .phone: "Phone"
            case .company: "Company"
            case .purpose: "Purpose"
            case .hostName: "Host name"
            case .hostEmail: "Host email"
            case .approver: "Approver"
            case .requiresApproval: "Approval"
            case .validFrom: "Valid from"
            case .validUntil: "Valid until"
            case .invite: "Invitation"
            }
        }

        /// The most characters a text field takes (the server's limits); 0 for the choices.
        public var limit: Int {
            switch self {
            case .name, .company, .hostName: FieldRules.nameLength
            case .email, .hostEmail: FieldRules.emailLength
            case .phone: FieldRules.phoneLength
            case .purpose: FieldRules.purposeLength
            // A site-local time or an RFC 3339 one (the domain's SiteTime reads at most 40 bytes).
            case .validFrom, .validUntil: 40
            case .approver, .requiresApproval, .invite: 0
            }
        }

        /// Whether the field is typed into (the others are chosen with Space, Left, Right).
        public var isText: Bool { limit > 0 }
    }

    var inputs = Field.allCases.map { TextInput(limit: $0.limit) }
    public internal(set) var focus: Field = .name
    /// The approvers to choose from; `approverIndex` nil is "any approver".
    public internal(set) var approvers: [ApproverChoice]
    public internal(set) var approversProblem: String?
    public internal(set) var approverIndex: Int?
    public internal(set) var requiresApproval = false
    public internal(set) var invite = false
    public internal(set) var notice: VisitorsScreen.Notice?
    /// Set by the first attempt to register: from then on an empty name is said to be missing.
    public internal(set) var attempted = false
    /// Set by Esc on a form with something typed: a second Esc discards it.
    public internal(set) var confirmingDiscard = false
    /// The last registration sent and its idempotency key: sending the same again (after a
    /// timeout or an unreachable server) reuses the key, so the server never registers it twice.
    var lastSent: SentRegistration?
    /// The registration the server refused as matching the blocklist: sending it again
    /// unchanged is the person's confirmation (`confirmBlocked`); any edit asks again.
    var blockedRegistration: VisitorRegistration?

    /// Whether the form waits for the confirmation of a visitor who matches the blocklist.
    public var confirmingBlocked: Bool { blockedRegistration != nil }

    struct SentRegistration: Sendable, Equatable {
        var registration: VisitorRegistration
        var key: String
    }

    /// A form checked before sending: ready, or the first field at fault.
    enum Checked: Equatable {
        case ready(VisitorRegistration)
        case fault(Field)
    }

    public func text(_ field: Field) -> String { inputs[field.rawValue].text }

    public var chosenApprover: ApproverChoice? { approverIndex.map { approvers[$0] } }

    /// Whether anything was typed or chosen (Esc then asks before discarding).
    var isTouched: Bool {
        inputs.contains { !$0.text.isEmpty } || approverIndex != nil || requiresApproval || invite
    }

    static let keyHelp: [(key: String, action: String)] = [
        ("Tab, Down / Shift-Tab, Up", "next or previous field"),
        ("Enter", "next field; on the last: register"),
        ("Ctrl-S", "register from any field"),
        ("Space, Left, Right", "choose: the approver, approval, the invitation"),
        ("Backspace, Ctrl-U", "delete a character, clear the field"),
        ("Esc", "close the form (twice when something was typed)"),
    ]

    // MARK: - The rules

    /// What is wrong with `field` as it stands, in the server's words; nil when nothing is.
    /// The rules are `FieldRules`, the server's own; the dates are the form's (site-local
    /// `YYYY-MM-DD HH:MM` or RFC 3339, read by the domain's `SiteTime` as the command line reads
    /// them; both or neither; until after from).
    public func problem(_ field: Field, siteTime: SiteClock) -> String? {
        do throws(FieldRuleViolation) {
            switch field {
            case .name: _ = try FieldRules.text(text(.name), "name", maxLength: FieldRules.nameLength, required: attempted)
            case .email: _ = try FieldRules.email(text(.email), "email")
            case .phone: _ = try FieldRules.phone(text(.phone), "phone")
            case .company: _ = try FieldRules.text(text(.company), "company", maxLength: FieldRules.nameLength)
            case .purpose: _ = try FieldRules.text(text(.purpose), "purpose", maxLength: FieldRules.purposeLength)
            case .hostName: _ = try FieldRules.text(text(.hostName), "host name", maxLength: FieldRules.nameLength)
            case .hostEmail: _ = try FieldRules.email(text(.hostEmail), "host email")
            case .validFrom, .validUntil: return dateProblem(field, siteTime: siteTime)
            case .invite:
                if invite, text(.email).trimmingCharacters(in: .whitespacesAndNewlines).isEmpty {
                    return "an invitation needs the visitor's email"
                }
            case .approver, .requiresApproval: break
            }
        } catch {
            return error.message
        }
        return nil
    }

    private func dateProblem(_ field: Field, siteTime: SiteClock) -> String? {
        let typed = text(field).trimmingCharacters(in: .whitespaces)
        let other = text(field == .validFrom ? .validUntil : .validFrom).trimmingCharacters(in: .whitespaces)
        if typed.isEmpty {
            return !other.isEmpty && attempted ? "give both valid from and valid until, or neither (today, all day)" : nil
        }
        let date: Date
        switch siteTime.instant(typed, field.label.lowercased()) {
        case .success(let instant): date = instant
        case .failure(let failure): return failure.message
        }
        if field == .validUntil, case .success(let from) = siteTime.instant(other, "valid from"), date <= from {
            return "valid until must be after valid from"
        }
        return nil
    }

    /// The registration to send, or the first field at fault.
    func registration(siteTime: SiteClock) -> Checked {
        var checked = self
        checked.attempted = true
        if let field = Field.allCases.first(where: { checked.problem($0, siteTime: siteTime) != nil }) { return .fault(field) }
        func value(_ field: Field) -> String? {
            let trimmed = text(field).trimmingCharacters(in: .whitespacesAndNewlines)
            return trimmed.isEmpty ? nil : trimmed
        }
        return .ready(VisitorRegistration(
            name: value(.name) ?? "", email: value(.email)?.lowercased(), phone: value(.phone), company: value(.company),
            purpose: value(.purpose), hostName: value(.hostName), hostEmail: value(.hostEmail)?.lowercased(),
            approverId: chosenApprover?.id, requiresApproval: requiresApproval,
            validFrom: value(.validFrom).flatMap { try? siteTime.instant($0, "valid from").get() },
            validUntil: value(.validUntil).flatMap { try? siteTime.instant($0, "valid until").get() },
            invite: invite))
    }
}

extension VisitorsScreen {
    func openForm() -> ScreenAction {
        var form = RegistrationForm(approvers: [])
        if choosesApprover {
            do {
                form.approvers = try services.approvers()
            } catch {
                form.approversProblem = "The approvers could not be read (\(error.sentence)); any approver may decide."
            }
        }
        self.form = form
        notice = nil
        return .redraw
    }

    func handleForm(_ key: Key) -> ScreenAction {
        guard var form else { return .none }
        let fields = RegistrationForm.Field.allCases
        let field = form.focus
        if key != .escape { form.confirmingDiscard = false }
        switch key {
        case .character(" ") where !field.isText, .right where !field.isText:
            form.choose(forward: true)
        case .left where !field.isText:
            form.choose(forward: false)
        case .character(let character) where field.isText:
            form.notice = nil
            if !form.inputs[field.rawValue].insert(character) {
                form.notice = Notice(.warning, TextInput.isPrintable(character)
                                     ? "\(field.label) takes at most \(field.limit) characters; the rest was not typed."
                                     : "Control characters cannot be typed here; nothing was changed.")
            }
        case .backspace where field.isText, .delete where field.isText:
            guard form.inputs[field.rawValue].deleteBackward() else { return .none }
            form.notice = nil
        case .control("u") where field.isText:
            form.inputs[field.rawValue].text = ""
            form.notice = nil
        case .tab, .down:
            form.focus = fields[(field.rawValue + 1) % fields.count]
        case .backTab, .up:
            form.focus = fields[(field.rawValue + fields.count - 1) % fields.count]
        case .enter where field != fields.last:
            form.focus = fields[field.rawValue + 1]
        case .enter, .control("s"):
            return submit(form)
        case .escape:
            if form.isTouched && !form.confirmingDiscard {
                form.confirmingDiscard = true
                form.notice = Notice(.warning, "Press Esc again to discard what was typed; any other key goes on.")
            } else {
                self.form = nil
                notice = Notice(.warning, "Registration closed: nothing was sent.")
                return .redraw
            }
        case .resize:
            return .redraw
        default:
            return .none
        }
        self.form = form
        return .redraw
    }

    private func submit(_ form: RegistrationForm) -> ScreenAction {
        var form = form
        form.attempted = true
        var registration: VisitorRegistration
        switch form.registration(siteTime: siteTime) {
        case .fault(let field):
            // Everything typed stays; the field at fault gets the keyboard.
            form.focus = field
            form.notice = Notice(.error, "Not sent: \(form.problem(field, siteTime: siteTime) ?? "check \(field.label)").")
            self.form = form
            return .redraw
        case .ready(let value):
            registration = value
        }
        // The same registration again after the blocklist question is the confirmation; a
        // changed one is judged afresh.
        if let blocked = form.blockedRegistration {
            if blocked == registration { registration.confirmBlocked = true } else { form.blockedRegistration = nil }
        }
        let key = form.lastSent.flatMap { $0.registration == registration ? $0.key : nil } ?? UUID().uuidString
        form.lastSent = .init(registration: registration, key: key)
        do {
            let visitor = try services.register(registration, idempotencyKey: key)
            self.form = nil
            let invited = registration.invite ? "; the invitation is queued" : ""
            notice = Notice(.ok, "Registered \(visitor.name), pass \(visitor.shortId.rawValue)\(invited).")
            reload()
            if let index = visitors.firstIndex(where: { $0.id == visitor.id }) { list.select(index, count: visitors.count) }
            return .redraw
        } catch {
            // The form stays as typed: a refusal names the field, an outage asks for a retry.
            switch error {
            case .blocklistMatch where !registration.confirmBlocked:
                form.blockedRegistration = registration
                form.notice = Notice(.warning, "\(registration.name) matches the blocklist; nothing was saved. "
                                     + "Press Ctrl-S again to register them anyway, or change the form or press Esc.")
            case .blocklistMatch:
                form.notice = Notice(.error, "Not registered: \(error.sentence) The form is kept; turn the invitation off and press Ctrl-S.")
            case .offline, .failed:
                form.notice = Notice(.error, "Not registered: \(error.sentence) The form is kept; Ctrl-S sends it again.")
            default:
                form.notice = Notice(.error, "Not registered: \(error.sentence) The form is kept; correct it and press Ctrl-S.")
            }
            self.form = form
            return .alert
        }
    }

    // MARK: - Drawing

    func renderForm(_ form: RegistrationForm, into canvas: inout Canvas, area: Area) {
        var footer: [(String, Canvas.Style)] = []
        if let notice = form.notice { footer.append((notice.text, notice.kind.style)) }
        footer.append(("Tab: next · Shift-Tab: back · Space: choose · Ctrl-S: register · Esc: close", .dim))
        let footerTop = canvas.putFooter(footer, in: area)
        let labelWidth = 13
        let room = max(0, area.width - 2 - labelWidth)
        // Each field's row, then its problem's row under it.
        var rows: [(text: String, style: Canvas.Style, field: RegistrationForm.Field?)] = [
            ("New visitor · times in \(siteTime.zoneName), YYYY-MM-DD HH:MM · empty: today, all day", .title, nil),
        ]
        if let problem = form.approversProblem { rows.append((problem, Canvas.Style(.warning), nil)) }
        for field in RegistrationForm.Field.allCases {
            let focused = form.focus == field
            let value: String
            switch field {
            case .approver:
                value = form.chosenApprover.map { "< \($0.name) <\($0.email)> >" } ?? "< any approver >"
            case .requiresApproval:
                value = form.requiresApproval ? "[x] an approver decides at the gate" : "[ ] admitted on the pass alone"
            case .invite:
                value = form.invite ? "[x] e-mail the pass to the visitor" : "[ ] no invitation mail"
            default:
                value = form.inputs[field.rawValue].visibleTail(width: room, cursor: focused)
            }
            let marker = focused ? "> " : "  "
            rows.append((marker + field.label.padding(toLength: labelWidth, withPad: " ", startingAt: 0) + value,
                         focused ? Canvas.Style(.normal, bold: true) : .plain, field))
            if let problem = form.problem(field, siteTime: siteTime) {
                rows.append((String(repeating: " ", count: 2 + labelWidth) + "! " + problem, Canvas.Style(.danger, bold: true), field))
            }
        }
        // Scroll so that the focused field and its problem stay in view.
        let visible = max(0, footerTop - area.y)
        let focusRows = rows.indices.filter { rows[$0].field == form.focus }
        let lastFocus = focusRows.last ?? 0
        let first = max(0, min(lastFocus - visible + 1, rows.count - visible))
        for (offset, row) in rows.dropFirst(first).prefix(visible).enumerated() {
            canvas.put(ConsoleFormat.fit(row.text, width: area.width), x: area.x, y: area.y + offset, style: row.style,
                       maxWidth: area.width)
        }
    }
}

extension RegistrationForm {
    /// Space, Left or Right on a choice: the next (or previous) approver, or a toggle.
    mutating func choose(forward: Bool) {
        switch focus {
        case .approver:
            guard !approvers.isEmpty else {
                notice = VisitorsScreen.Notice(.warning, "No approvers to choose from: any approver may decide.")
                return
            }
            // nil ("any approver") sits before the first approver and after the last.
            let positions = approvers.count + 1
            let current = approverIndex.map { $0 + 1 } ?? 0
            let next = (current + (forward ? 1 : positions - 1)) % positions
            approverIndex = next == 0 ? nil : next - 1
        case .requiresApproval: requiresApproval.toggle()
        case .invite: invite.toggle()
        default: break
        }
    }
}
