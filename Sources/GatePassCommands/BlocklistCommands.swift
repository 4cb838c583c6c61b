import Foundation
import GatePassClient
import GatePassCore

/// `gatepass blocklist …`: who must not enter the site (OWNER/ADMIN; api.md "Blocklist").
/// Every check-in and walk-in is judged against it by the server; the gate only ever sees
/// `BLOCKED`, never the entry or its reason.
enum BlocklistCommands {
    static let members: [GatePassCLI.Subcommand] = [
        .init("list", "The blocklist, newest entry first, expired entries included.", BlocklistListCommand.self),
        .init("add", "Block a person at every gate: by name (and company), email or phone.", BlocklistAddCommand.self),
        .init("remove", "Remove an entry: the person is no longer blocked.", BlocklistRemoveCommand.self),
    ]

    /// One entry on one line for a person: who, until when, why, who added it.
    static func line(_ entry: BlocklistEntry, now: Date, _ clock: SiteClock) -> String {
        var who: [String] = []
        if let name = entry.name { who.append(entry.company.map { "\(name) (\($0))" } ?? name) }
        if let email = entry.email { who.append("<\(email)>") }
        if let phone = entry.phone { who.append("tel \(phone)") }
        let until: String
        if let expiresAt = entry.expiresAt {
            until = (entry.isActive(at: now) ? "until " : "expired ") + clock.stamped(expiresAt)
        } else {
            until = "no expiry"
        }
        return TerminalText.visible("\(entry.id)  \(who.joined(separator: " "))  \(until)  reason: \(entry.reason)")
    }
}

struct BlocklistListCommand: GatePassCommand {
    static let limit = PageOptions.limit(of: "entries")
    static let configuration = CommandConfiguration(
        name: "gatepass blocklist list",
        overview: "The organization's blocklist, newest entry first: who (name and company, email, phone), until when (site time), the reason and the entry's id. Expired entries are listed too; they block nobody.",
        options: [limit, OutputOptions.flag("Print the API's page: {\"items\": [{id, name, email, phone, company, reason, expiresAt, createdAt, createdBy}], \"nextCursor\"}.")])

    var limit: Int
    var json: Bool
    init(parsing arguments: ParsedArguments) throws(UsageError) {
        limit = try arguments.value(Self.limit) ?? PageOptions.defaultLimit
        json = arguments.has(OutputOptions.json)
    }

    func run(_ context: CommandContext) throws -> Int32 {
        let core = try context.core()
        let page = try core.online { api, token throws(ClientError) in try api.blocklist(token: token, limit: limit) }
        if json {
            context.terminal.out(ClientCommands.json(page))
            return 0
        }
        if page.items.isEmpty {
            context.terminal.out("the blocklist is empty")
        } else {
            let clock = try OfficeCommands.SiteZone(core).clock()
            for entry in page.items { context.terminal.out(BlocklistCommands.line(entry, now: context.clock.now(), clock)) }
        }
        PageOptions.noteMore(page, of: "blocklist entries", on: context.terminal)
        return 0
    }
}

struct BlocklistAddCommand: GatePassCommand {
    static let name = VisitorFieldOptions.text("--name", value: "NAME", maxLength: FieldRules.nameLength,
                                               help: "The person's full name; matched ignoring case, accents and spacing.")
    static let email = VisitorFieldOptions.address("--email", help: "Their email; matched exactly, in any case.")
    static let phone = Option<String>("--phone", value: "PHONE", help: "Their phone number; matched by its digits alone.") {
        (text: String) throws(UsageError) in
        try VisitorFieldOptions.checked("--phone") { () throws(FieldRuleViolation) in try FieldRules.phone(text, "--phone") }
    }
    static let company = VisitorFieldOptions.text("--company", value: "TEXT", maxLength: FieldRules.nameLength,
                                                  help: "Narrows --name: only visitors of this company match the name.")
    static let reason = VisitorFieldOptions.text("--reason", value: "TEXT", maxLength: NewBlocklistEntry.reasonLength, required: true,
                                                 help: "Why (shown to owners and admins only, never at the gate).")
    static let expires = VisitorFieldOptions.time("--expires", help: "When the entry stops blocking (default: never).")
    static let configuration = CommandConfiguration(
        name: "gatepass blocklist add",
        overview: "Block a person at every gate of the organization: from now on their check-ins and walk-ins answer BLOCKED, and owners and admins get a security alert. Give at least one of --name, --email and --phone; any one that matches is enough.",
        options: [name, email, phone, company, reason, expires, OutputOptions.flag("Print the entry as the API shapes it.")],
        discussion: VisitorFieldOptions.timesNote)

    var entry: NewBlocklistEntry
    var expiresAt: SiteTime?
    var json: Bool

    init(parsing arguments: ParsedArguments) throws(UsageError) {
        entry = NewBlocklistEntry(name: try arguments.value(Self.name), email: try arguments.value(Self.email),
                                  phone: try arguments.value(Self.phone), company: try arguments.value(Self.company),
                                  reason: try arguments.required(Self.reason))
        expiresAt = try arguments.value(Self.expires)
        json = arguments.has(OutputOptions.json)
    }

    func validate() throws(UsageError) {
        guard entry.name != nil || entry.email != nil || entry.phone != nil else {
            throw UsageError("give at least one of --name, --email and --phone")
        }
        if entry.company != nil, entry.name == nil {
            throw UsageError("--company narrows --name: give --name with it")
        }
        if let name = entry.name, BlocklistKeys.folded(name) == nil {
            throw UsageError("--name must hold a letter or digit once accents and spaces are ignored")
        }
    }

    func run(_ context: CommandContext) throws -> Int32 {
        let core = try context.core()
        let site = try OfficeCommands.SiteZone(core, needed: !json)
        var body = entry
        body.expiresAt = try OfficeCommands.validity(from: expiresAt, until: nil, site).from
        if let expiry = body.expiresAt, expiry.date <= context.clock.now() {
            throw UsageError("--expires \(try site.clock().stamped(expiry.date)) is not in the future: give a later time")
        }
        let created = try core.online { api, token throws(ClientError) in
            try api.addBlocklistEntry(token: token, body, idempotencyKey: OfficeCommands.idempotencyKey())
        }
        context.terminal.out(json ? ClientCommands.json(created)
                                  : "blocked: " + BlocklistCommands.line(created, now: context.clock.now(), try site.clock()))
        return 0
    }
}

struct BlocklistRemoveCommand: GatePassCommand {
    static let id = Argument<String>("ID", help: "The entry's id, as gatepass blocklist list shows it.") {
        (text: String) throws(UsageError) in
        // Entry ids are UUIDs: anything else is refused before it reaches a URL.
        guard UUID(uuidString: text) != nil else { throw UsageError("ID must be an entry id like 0190f3c2-…, as gatepass blocklist list shows it") }
        return text
    }
    static let configuration = CommandConfiguration(
        name: "gatepass blocklist remove",
        overview: "Remove a blocklist entry: the person it named is no longer blocked at any gate.",
        arguments: [id.spec], options: [])

    var id: String
    init(parsing arguments: ParsedArguments) throws(UsageError) { id = try arguments.required(Self.id) }

    func run(_ context: CommandContext) throws -> Int32 {
        try context.core().online { api, token throws(ClientError) in try api.removeBlocklistEntry(token: token, id: id) }
        context.terminal.out(visible: "removed blocklist entry \(id)")
        return 0
    }
}
