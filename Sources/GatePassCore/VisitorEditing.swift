import Foundation

/// Editing a registered visitor (`PATCH /api/visitors/:id`): which statuses may be edited,
/// what each field accepts, and when the pass must be re-issued. Pure, so the server and a
/// client's form agree.
public enum VisitorEditing {
    /// Only a visit that has not happened yet is edited (api.md).
    public static let editableStatuses: Set<VisitorStatus> = [.expected, .approved, .awaitingApproval]

    /// The longest validity a pass may have.
    public static let maximumValidity: TimeInterval = 366 * 86_400

    /// Why an edit is refused.
    public enum Refusal: Error, Sendable, Equatable, CustomStringConvertible {
        /// A field breaks its rule (400).
        case field(FieldRuleViolation)
        /// The visitor's status does not allow edits (409).
        case notEditable(VisitorStatus)

        public var description: String {
            switch self {
            case .field(let violation): violation.message
            case .notEditable(let status):
                "the visitor is \(status.rawValue): only EXPECTED, APPROVED or AWAITING_APPROVAL visitors can be edited"
            }
        }
    }

    /// `visitor` with `changes` applied and every changed field checked. The short id is left
    /// as it is: whether the pass must be re-issued is `reissuesPass(from:to:)`.
    public static func apply(_ changes: VisitorChanges, to visitor: Visitor) throws(Refusal) -> Visitor {
        guard editableStatuses.contains(visitor.status) else { throw .notEditable(visitor.status) }
        var edited = visitor
        do {
            switch changes.name {
            case .unchanged: break
            case .cleared: throw FieldRuleViolation(field: "name", message: "name is required and must not be null")
            case .set(let name): edited.name = try FieldRules.text(name, "name", maxLength: FieldRules.nameLength, required: true)!
            }
            edited.email = try text(changes.email, visitor.email) { (v: String) throws(FieldRuleViolation) in try FieldRules.email(v) }
            edited.phone = try text(changes.phone, visitor.phone) { (v: String) throws(FieldRuleViolation) in try FieldRules.phone(v) }
            edited.company = try text(changes.company, visitor.company) { (v: String) throws(FieldRuleViolation) in try FieldRules.text(v, "company") }
            edited.purpose = try text(changes.purpose, visitor.purpose) { (v: String) throws(FieldRuleViolation) in
                try FieldRules.text(v, "purpose", maxLength: FieldRules.purposeLength)
            }
            edited.hostName = try text(changes.hostName, visitor.hostName) { (v: String) throws(FieldRuleViolation) in try FieldRules.text(v, "hostName") }
            edited.hostEmail = try text(changes.hostEmail, visitor.hostEmail) { (v: String) throws(FieldRuleViolation) in try FieldRules.email(v, "hostEmail") }
            edited.approverId = changes.approverId.applied(to: visitor.approverId)
            switch changes.requiresApproval {
            case .unchanged: break
            case .cleared: throw FieldRuleViolation(field: "requiresApproval", message: "requiresApproval must be true or false")
            case .set(let value): edited.requiresApproval = value
            }
            var window = visitor.validity
            switch changes.validFrom {
            case .unchanged: break
            case .cleared: throw FieldRuleViolation(field: "validFrom", message: "validFrom must be a time, not null")
            case .set(let time): window.from = time.date
            }
            switch changes.validUntil {
            case .unchanged: break
            case .cleared: throw FieldRuleViolation(field: "validUntil", message: "validUntil must be a time, not null")
            case .set(let time): window.until = time.date
            }
            try check(window)
            edited.validity = window
        } catch let violation as FieldRuleViolation {
            throw .field(violation)
        } catch {
            preconditionFailure("only field rules throw here: \(error)")
        }
        return edited
    }

    /// A validity window's own rules: it lies within what a pass text can carry, does not end
    /// before it starts, and lasts at most 366 days.
    public static func check(_ window: ValidityWindow) throws(FieldRuleViolation) {
        // A pass text carries its times as unsigned decimal unix seconds (api.md "Offline
        // passes"), so a window before 1970 would be signed with a sign no reader accepts.
        guard window.from >= ValidityWindow.earliest else {
            throw FieldRuleViolation(field: "validFrom", message: "validFrom must not be before 1970-01-01T00:00:00Z")
        }
        guard window.until <= ValidityWindow.latest else {
            throw FieldRuleViolation(field: "validUntil", message: "validUntil must not be after 2286-11-20T17:46:39Z")
        }
        guard window.from <= window.until else {
            throw FieldRuleViolation(field: "validUntil", message: "validUntil must not be before validFrom")
        }
        guard window.until.timeIntervalSince(window.from) <= maximumValidity else {
            throw FieldRuleViolation(field: "validUntil",
                                     message: "a pass may be valid for at most 366 days (validFrom to validUntil)")
        }
    }

    /// How long after its end a window may still be set: a registration queued in an outbox
    /// and replayed after midnight still gets through.
    public static let endedWindowGrace: TimeInterval = 86_400

    /// A window set or changed by a request must not have ended more than `endedWindowGrace`
    /// before the request arrived (`now`): such a pass could never be used. Windows a request
    /// leaves as they were are not judged.
    public static func checkNotLongEnded(_ window: ValidityWindow, now: Date) throws(FieldRuleViolation) {
        guard window.until >= now.addingTimeInterval(-endedWindowGrace) else {
            throw FieldRuleViolation(field: "validUntil",
                                     message: "validUntil ended more than 24 hours ago: give a window that ends later")
        }
    }

    /// A changed window re-issues the pass: a new pass text (a new short id while passes are
    /// GP1) and a new pass page; the old ones stop working (api.md). So does a changed
    /// `requiresApproval`: the pass is then signed with a key of the other purpose, and a text
    /// signed with the old one is `INVALID` (`SignedPassText.matches`).
    public static func reissuesPass(from old: Visitor, to new: Visitor) -> Bool {
        old.validity != new.validity || PassKeyPurpose.of(old) != PassKeyPurpose.of(new)
    }

    private static func text(_ change: FieldChange<String>, _ current: String?,
                             _ rule: (String) throws(FieldRuleViolation) -> String?) throws(FieldRuleViolation) -> String? {
        switch change {
        case .unchanged: current
        case .cleared: nil
        case .set(let value): try rule(value)
        }
    }
}
