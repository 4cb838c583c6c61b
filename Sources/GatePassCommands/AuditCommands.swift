import Foundation
import GatePassClient
import GatePassCore
import GatePassServer

/// `gatepass audit …`: the audit log read through the server (`list`), and its own checks on
/// the database file (`verify`).
enum AuditCommands {
    static let members: [GatePassCLI.Subcommand] = [
        .init("list", "Read the audit log, newest first: who changed what, when (OWNER/ADMIN).", AuditListCommand.self),
        .init("verify", "Check the audit log's chain; exit 1 naming the first altered, inserted or removed entry.",
              AuditVerifyCommand.self),
    ]
}

struct AuditVerifyCommand: GatePassCommand {
    static let database = ServerOptions.database("The database.", required: true)
    static let secretFile = ServerOptions.secretFile
    static let configuration = CommandConfiguration(
        name: "gatepass audit verify",
        overview: "Walk the audit log of a database file from its first entry: every entry's values must hash to what its link covers, every link must follow from the one before (HMAC under the key from the server's secret), an erased entry must be of an action retention erases, hold no values and be listed by a later entry that records the erasure, and the log must reach the newest entry recorded outside the database (<db>.audit-head, signed with the same key), which must be there once the log has entries. Exits 0 when the log is intact, 1 naming the first entry that was altered, inserted or removed, or what is wrong with the head.",
        options: [database, secretFile])

    var database: String
    var secretFile: String?

    init(parsing arguments: ParsedArguments) throws(UsageError) {
        database = try arguments.required(Self.database)
        secretFile = try arguments.value(Self.secretFile)
    }

    func run(_ context: CommandContext) throws -> Int32 {
        try AdministrationCommands.requireExisting(database)
        let verdict: AuditVerdict
        do {
            verdict = try AuditVerification.verify(database: database, secretFile: secretFile)
        } catch {
            throw CommandFailure("cannot verify \(database): \(error)")
        }
        if verdict.isIntact {
            context.terminal.out(visible: verdict.description)
            return 0
        }
        context.terminal.err(verdict.description)
        return 1
    }
}

struct AuditListCommand: GatePassCommand {
    static let from = SiteTimeOptions.option("--from", help: "Only entries at or after this time: 2026-12-06 09:00 in the site's time zone, or RFC 3339.")
    static let to = SiteTimeOptions.option("--to", help: "Only entries at or before this time (as --from).")
    static let actor = Option<String>("--actor", value: "WHO",
                                      help: "Only entries by this actor: a user's email or id, a kiosk's id, system (retention, automatic check-out), kiosk or user (every actor of that kind).") {
        (text: String) throws(UsageError) -> String in
        if text.contains("@") {
            guard (try? FieldRules.email(text, "--actor")) != nil else {
                throw UsageError("--actor must be an email, a user's or kiosk's id, system, kiosk or user")
            }
            return text
        }
        guard (try? FieldRules.identifier(text, "--actor")) != nil else {
            throw UsageError("--actor must be an email, a user's or kiosk's id, system, kiosk or user")
        }
        return text
    }
    static let action = Option<AuditAction>("--action", value: "A", help: "Only entries of this action, e.g. visitor.checkin.") {
        (text: String) throws(UsageError) -> AuditAction in
        guard let action = AuditAction(rawValue: text) else {
            throw UsageError("--action must be one of \(AuditAction.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        return action
    }
    static let entityId = Option<String>("--entity-id", value: "ID", help: "Only entries about this visitor, user, checkpoint or other entity.") {
        (text: String) throws(UsageError) -> String in
        do throws(FieldRuleViolation) { return try FieldRules.identifier(text, "--entity-id") } catch { throw UsageError(error.message) }
    }
    static let limit = PageOptions.limit(of: "entries")
    static let csv = Flag("--csv", help: "Print the server's CSV export instead (UTC times, ids; the export is itself audited).")
    static let configuration = CommandConfiguration(
        name: "gatepass audit list",
        overview: "The audit log of your organization, newest first (OWNER/ADMIN): when (in the site's time zone, named on the first line), who, what and about whom, by name where the server lets you read it.",
        usage: "gatepass audit list [--from TIME] [--to TIME] [--actor WHO] [--action A] [--entity-id ID] [--limit N] [--csv | --json]",
        options: [from, to, actor, action, entityId, limit, csv,
                  OutputOptions.flag("Print the API's page: {\"items\": [{id, at, actorKind, actorId, action, entity, entityId, before, after}], \"nextCursor\"}.")],
        discussion: "A TIME without an offset (2026-12-06 09:00, 2026-12-06T09:00:05) is read in the organization's time zone; one with an offset or Z is taken as it is.")

    var from: String?
    var to: String?
    var actor: String?
    var action: AuditAction?
    var entityId: String?
    var limit: Int
    var csv: Bool
    var json: Bool

    init(parsing arguments: ParsedArguments) throws(UsageError) {
        from = try arguments.value(Self.from)
        to = try arguments.value(Self.to)
        actor = try arguments.value(Self.actor)
        action = try arguments.value(Self.action)
        entityId = try arguments.value(Self.entityId)
        limit = try arguments.value(Self.limit) ?? PageOptions.defaultLimit
        csv = arguments.has(Self.csv)
        json = arguments.has(OutputOptions.json)
    }

    func validate() throws(UsageError) {
        guard !(csv && json) else { throw UsageError("choose one of --csv and --json") }
    }

    func run(_ context: CommandContext) throws -> Int32 {
        let core = try context.core()
        let clock = try SiteCommands.clock(core)
        let (from, to) = try SiteTimeOptions.window(from: from, to: to, clock: { clock })
        var actorId = actor
        if let actor, actor.contains("@") { actorId = try UserCommands.userId(actor, core) }
        if csv {
            let text = try core.online { api, token throws(ClientError) in
                try api.auditLogCSV(token: token, from: from, to: to, actor: actorId, action: action?.rawValue, entityId: entityId)
            }
            context.terminal.out(text, terminator: "")
            return 0
        }
        let page = try core.online { api, token throws(ClientError) in
            try api.auditLog(token: token, from: from, to: to, actor: actorId, action: action?.rawValue, entityId: entityId, limit: limit)
        }
        if json {
            context.terminal.out(ClientCommands.json(page))
            return 0
        }
        let names = NameDirectory(core)
        context.terminal.out(SiteCommands.zoneLine(clock))
        for entry in page.items { context.terminal.out(visible: try Self.line(entry, clock, names)) }
        if page.items.isEmpty { context.terminal.out("no entries") }
        PageOptions.noteMore(page, of: "entries", filtered: true, on: context.terminal)
        return 0
    }

    /// `06 Dec 2026 09:00:05  Olivia Owner  checkpoint.create  checkpoint North door`: who and
    /// what about by name where the caller may read it, by id where not.
    static func line(_ entry: AuditEntry, _ clock: SiteClock, _ names: NameDirectory) throws -> String {
        let actor: String
        switch entry.actorKind {
        case .system: actor = "system"
        case .kiosk: actor = "kiosk \(entry.actorId ?? "-")"
        case .user: actor = try entry.actorId.map { id in try names.user(id) ?? "user \(id)" } ?? "user -"
        }
        var about = entry.entity
        if let id = entry.entityId {
            let name: String?
            switch entry.entity {
            case "visitor": name = try names.visitor(id)
            case "checkpoint": name = try names.checkpoint(id)
            case "user": name = try names.user(id)
            default: name = nil
            }
            about += " " + (name ?? id)
        }
        return [SiteCommands.listTime(entry.at, clock), actor, entry.action, about].joined(separator: "  ")
    }
}
