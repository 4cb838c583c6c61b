import Foundation
import GatePassClient
import GatePassCore

/// `gatepass site show|set`: the organization's settings (api.md "Site operations":
/// `GET`/`PATCH /api/organization`). Every value is checked here with the server's own rules
/// (`OrganizationRules`) before anything is sent.
enum SiteCommands {
    static let members: [GatePassCLI.Subcommand] = [
        .init("show", "The organization's name, time zone, retention and automatic check-out.", SiteShowCommand.self),
        .init("set", "Change the time zone, retention or automatic check-out (OWNER).", SiteSetCommand.self),
    ]

    /// The settings a line each, for a person (the name comes from outside: made visible).
    static func describe(_ organization: Organization) -> String {
        let checkout = organization.autoCheckoutAt.map { "\($0) (\(organization.timeZone))" } ?? "off"
        return [
            "organization: \(organization.name)",
            "time zone: \(organization.timeZone)",
            "retention: \(organization.retentionDays) days (visitors are anonymised that long after their pass ends)",
            "automatic check-out: \(checkout)",
            "id: \(organization.id)",
        ].map(TerminalText.visible).joined(separator: "\n")
    }

    /// The site's clock, every time a person reads is shown in (the organization from the
    /// cache when the server does not answer).
    static func clock(_ core: ClientCore) throws -> SiteClock {
        let organization = try core.organization().value
        guard let clock = SiteClock(zoneNamed: organization.timeZone) else {
            throw CommandFailure("the organization's time zone \(organization.timeZone) is not known on this computer; update its time zone data (tzdata)")
        }
        return clock
    }

    /// `06 Dec 2026 09:00:05`: a time in a list where seconds tell two entries apart (the list's
    /// first line names the zone).
    static func listTime(_ date: Date, _ clock: SiteClock) -> String {
        clock.date(date) + " " + clock.timeWithSeconds(date)
    }

    /// The line that heads a list of times: which zone they are in.
    static func zoneLine(_ clock: SiteClock) -> String { "times in \(clock.zoneName)" }

    static func print(_ organization: Organization, json: Bool, _ context: CommandContext) {
        context.terminal.out(json ? ClientCommands.json(organization) : describe(organization))
    }
}

struct SiteShowCommand: GatePassCommand {
    static let configuration = CommandConfiguration(
        name: "gatepass site show",
        overview: "Show your organization's settings: name, time zone (the one every time is shown and typed in), retention (days after a pass ends before its visitor is anonymised) and the automatic check-out time.",
        options: [OutputOptions.flag("Print the API's answer: {id, name, timeZone, retentionDays, autoCheckoutAt}.")])

    var json: Bool
    init(parsing arguments: ParsedArguments) { json = arguments.has(OutputOptions.json) }

    func run(_ context: CommandContext) throws -> Int32 {
        let organization = try context.core().online { api, token throws(ClientError) in try api.organization(token: token) }
        SiteCommands.print(organization, json: json, context)
        return 0
    }
}

struct SiteSetCommand: GatePassCommand {
    static let timeZone = Option<String>("--time-zone", value: "ZONE",
                                         help: "An IANA time zone such as Europe/Bucharest: the site's days, validity defaults and every time shown.") {
        (text: String) throws(UsageError) -> String in
        guard OrganizationRules.isZoneName(text) else {
            var message = "--time-zone must be an IANA zone such as Europe/Bucharest (no abbreviations or offsets)"
            if text.utf8.count <= 64, let nearest = NearestName.nearest(to: text, among: TimeZone.knownTimeZoneIdentifiers),
               NearestName.editDistance(text.lowercased(), nearest.lowercased()) <= 3 {
                message += "; did you mean \(nearest)?"
            }
            throw UsageError(message)
        }
        return text
    }
    static let retentionDays = Option<Int?>("--retention-days", value: "N|default",
                                            help: "Days after a pass ends before its visitor is anonymised, from \(OrganizationRules.retentionDaysRange.lowerBound) to \(OrganizationRules.retentionDaysRange.upperBound); default: the server's.") {
        (text: String) throws(UsageError) -> Int? in
        if text == "default" { return nil }
        guard let days = Int(text), OrganizationRules.retentionDaysRange.contains(days) else {
            throw UsageError("--retention-days must be a whole number of days from \(OrganizationRules.retentionDaysRange.lowerBound) to \(OrganizationRules.retentionDaysRange.upperBound), or default")
        }
        return days
    }
    static let autoCheckout = Option<String?>("--auto-checkout", value: "HH:MM|off",
                                              help: "When visitors still inside are checked out, site-local (00:00 to 23:59); off: never.") {
        (text: String) throws(UsageError) -> String? in
        if text == "off" { return nil }
        guard OrganizationRules.isClockTime(text) else {
            throw UsageError("--auto-checkout must be a site-local time HH:MM (00:00 to 23:59), or off")
        }
        return text
    }
    static let configuration = CommandConfiguration(
        name: "gatepass site set",
        overview: "Change your organization's settings (OWNER). Only the settings given change; the answer is the settings as they are now.",
        options: [timeZone, retentionDays, autoCheckout, OutputOptions.flag("Print the API's answer: {id, name, timeZone, retentionDays, autoCheckoutAt}.")])

    var changes: OrganizationChanges
    var json: Bool
    init(parsing arguments: ParsedArguments) throws(UsageError) {
        changes = OrganizationChanges(timeZone: try arguments.value(Self.timeZone), retentionDays: try arguments.value(Self.retentionDays),
                                      autoCheckoutAt: try arguments.value(Self.autoCheckout))
        json = arguments.has(OutputOptions.json)
        guard changes != OrganizationChanges() else {
            throw UsageError("nothing to change: give at least one of --time-zone, --retention-days and --auto-checkout")
        }
    }

    func run(_ context: CommandContext) throws -> Int32 {
        let organization = try context.core().online { api, token throws(ClientError) in
            try api.updateOrganization(token: token, changes, idempotencyKey: OfficeCommands.idempotencyKey())
        }
        SiteCommands.print(organization, json: json, context)
        return 0
    }
}
