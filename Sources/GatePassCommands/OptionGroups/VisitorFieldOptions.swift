import GatePassCore

/// A visitor's fields as `visitor add` and `visitor edit` take them: one declaration each,
/// checked by the domain's field rules (`FieldRules`, the ones the server applies), so a bad
/// value is a usage error that names the option before anything is sent.
enum VisitorFieldOptions {
    static func name(required: Bool) -> Option<String> {
        text("--name", value: "NAME", maxLength: FieldRules.nameLength, required: required, help: "The visitor's full name.")
    }
    static let email = address("--email", help: "The visitor's email.")
    static let phone = Option<String>("--phone", value: "PHONE", help: "The visitor's phone number.") {
        (text: String) throws(UsageError) in try checked("--phone") { () throws(FieldRuleViolation) in try FieldRules.phone(text, "--phone") }
    }
    static let company = text("--company", value: "TEXT", help: "The visitor's company.")
    static let purpose = text("--purpose", value: "TEXT", maxLength: FieldRules.purposeLength, help: "The purpose of the visit.")
    static let host = text("--host", value: "NAME", help: "Whom they visit.")
    static let hostEmail = address("--host-email", help: "The host's email: told when the visitor arrives.")
    static let approver = address("--approver", help: "The APPROVER who decides, by email (looked up in the organization's users).")
    static let validFrom = time("--valid-from", help: "When the pass starts.")
    static let validUntil = time("--valid-until", help: "When the pass ends.")
    static let requiresApproval = Flag("--requires-approval", help: "An approver must admit the visitor at the gate.")
    static let confirmBlocked = Flag("--confirm-blocked", help: "Save even if the visitor matches the blocklist (without it the server refuses a match and saves nothing).")

    /// The paragraph that says how times are read.
    static let timesNote = """
        Times are site-local, in the organization's time zone (GET /api/organization): 2026-12-02 09:00 or \
        2026-12-02T09:00, seconds optional; an RFC 3339 time (2026-12-02T07:00:00Z, or with an offset) is taken as it is. \
        A local time the clocks skip is refused; one they pass twice is its first occurrence.
        """

    static func text(_ name: String, value: String, maxLength: Int = 200, required: Bool = false, help: String) -> Option<String> {
        Option(name, value: value, required: required, help: help) { (text: String) throws(UsageError) in
            try checked(name) { () throws(FieldRuleViolation) in try FieldRules.text(text, name, maxLength: maxLength) }
        }
    }

    static func address(_ name: String, required: Bool = false, help: String) -> Option<String> {
        Option(name, value: "EMAIL", required: required, help: help) { (text: String) throws(UsageError) in
            try checked(name) { () throws(FieldRuleViolation) in try FieldRules.email(text, name) }
        }
    }

    static func time(_ name: String, help: String) -> Option<SiteTime> {
        Option(name, value: "TIME", help: help) { (text: String) throws(UsageError) in
            do throws(SiteTime.Failure) { return try SiteTime.parse(text, name) } catch { throw UsageError(error.message) }
        }
    }

    /// The rule's value; its violation, or an empty value, as a usage error.
    static func checked(_ name: String, _ rule: () throws(FieldRuleViolation) -> String?) throws(UsageError) -> String {
        let value: String?
        do throws(FieldRuleViolation) { value = try rule() } catch { throw UsageError(error.message) }
        guard let value else { throw UsageError("\(name) must not be empty") }
        return value
    }
}

/// `ID`: every command that names one visitor takes its id or its short id, in any spelling
/// (`k7q2-m9xd` is `K7Q2M9XD`). Anything else is a usage error before a request is made, so a
/// mistyped or hostile argument never reaches a URL.
enum VisitorArgument {
    static let id = Argument<VisitorReference>("ID", help: "The visitor's id or short id.") {
        (text: String) throws(UsageError) in
        guard let reference = VisitorReference(text) else { throw UsageError("ID must be \(VisitorReference.expected)") }
        return reference
    }
}
