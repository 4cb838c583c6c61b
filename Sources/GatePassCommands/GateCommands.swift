import Foundation
import GatePassClient
import GatePassCore
import GatePassServer

/// `gatepass checkpoint …`, `gatepass scanner-token …` and `gatepass kiosk enrol-code`: the
/// gates an OWNER/ADMIN manages through the API (as logged in with `gatepass login`);
/// `checkpoint add --db` bootstraps a database file.
enum GateCommands {
    static let checkpointMembers: [GatePassCLI.Subcommand] = [
        .init("list", "The organization's checkpoints: name, default, retired, id.", CheckpointListCommand.self),
        .init("add", "Add a checkpoint (with --db: to a database file, for bootstrapping).", CheckpointAddCommand.self),
        .init("rename", "Rename a checkpoint.", CheckpointRenameCommand.self),
        .init("retire", "Retire a checkpoint: its scanner tokens and kiosks stop at once (--undo brings it back).",
              CheckpointRetireCommand.self),
    ]

    static let scannerTokenMembers: [GatePassCLI.Subcommand] = [
        .init("list", "The live scanner tokens, kiosks included, with their last use.", ScannerTokenListCommand.self),
        .init("revoke", "Revoke a scanner token: its kiosk's next request is refused (REVOKED).", ScannerTokenRevokeCommand.self),
    ]

    static let checkpoint = Argument<String>("CHECKPOINT", missing: "the checkpoint's id is required",
                                             help: "The checkpoint's id (see gatepass checkpoint list).")

    static func describe(_ checkpoint: Checkpoint) -> String {
        var line = checkpoint.name
        if checkpoint.isDefault { line += "  default" }
        if checkpoint.retired { line += "  RETIRED" }
        return line + "  id \(checkpoint.id)"
    }

    /// `kiosk North kiosk  at North door  made by Olivia Owner  last used never  expires 06 Dec 2027 09:00  id …`:
    /// names where the caller may read them, times in the site's zone (named by the list's first
    /// line); the id last, since revoke takes it.
    static func describe(_ token: ScannerTokenSummary, _ clock: SiteClock, _ names: NameDirectory) throws -> String {
        let maker = try names.user(token.createdBy) ?? "user \(token.createdBy)"
        let label = token.kioskName.map { "kiosk \($0)" } ?? "scanner of \(maker)"
        let gate = try names.checkpoint(token.checkpointId) ?? "checkpoint \(token.checkpointId)"
        let used = token.lastUsedAt.map { clock.dateTime($0.date) } ?? "never"
        return "\(label)  at \(gate)  made by \(maker)  last used \(used)  expires \(clock.dateTime(token.expiresAt.date))  id \(token.id)"
    }

    static func update(_ id: String, _ changes: CheckpointChanges, json: Bool, _ context: CommandContext) throws -> Int32 {
        let checkpoint = try context.core().online { api, token throws(ClientError) in
            try api.updateCheckpoint(token: token, id: id, changes)
        }
        context.terminal.out(json ? ClientCommands.json(checkpoint) : TerminalText.visible(describe(checkpoint)))
        return 0
    }
}

struct CheckpointListCommand: GatePassCommand {
    static let configuration = CommandConfiguration(
        name: "gatepass checkpoint list", overview: "The checkpoints (gates) of your organization, oldest first.",
        options: [OutputOptions.flag("Print the API's page: {\"items\": [Checkpoint], \"nextCursor\"}.")])

    var json: Bool
    init(parsing arguments: ParsedArguments) throws(UsageError) { json = arguments.has(OutputOptions.json) }

    func run(_ context: CommandContext) throws -> Int32 {
        let page = try context.core().online { api, token throws(ClientError) in try api.checkpoints(token: token) }
        if json {
            context.terminal.out(ClientCommands.json(page))
        } else {
            for checkpoint in page.items { context.terminal.out(visible: GateCommands.describe(checkpoint)) }
        }
        return 0
    }
}

struct CheckpointAddCommand: GatePassCommand {
    static let checkpointName = Argument<String>("NAME", optional: true, help: "The checkpoint's name, unique in its organization.")
    static let database = ServerOptions.database(
        "Add to this database file instead, before anyone can log in (bootstrapping); the organization is named with --organization.")
    static let name = Option<String>("--name", value: "N", help: "The name, as NAME gives it (kept for scripts written for --db).")
    static let organization = Option<String>("--organization", value: "NAME", help: "With --db: the organization's name.")
    static let configuration = CommandConfiguration(
        name: "gatepass checkpoint add",
        overview: "Add a checkpoint (a gate) to your organization through the server (OWNER/ADMIN). With --db, add it to an organization in a database file directly.",
        usage: "gatepass checkpoint add NAME [--json] | gatepass checkpoint add NAME --db PATH|URL --organization NAME [--secret-file FILE]",
        arguments: [checkpointName.spec],
        options: [database, organization, name, OutputOptions.flag("Print the new checkpoint as the API shapes it (without --db)."),
                  ServerOptions.secretFile])

    var name: String
    var database: String?
    var organization: String?
    var secretFile: String?
    var json: Bool

    init(parsing arguments: ParsedArguments) throws(UsageError) {
        switch (try arguments.value(Self.checkpointName), try arguments.value(Self.name)) {
        case (let positional?, nil): name = positional
        case (nil, let option?): name = option
        case (nil, nil): throw UsageError("the checkpoint's name is required: gatepass checkpoint add NAME")
        case (_?, _?): throw UsageError("give the name once: as NAME or as --name, not both")
        }
        database = try arguments.value(Self.database)
        organization = try arguments.value(Self.organization)
        secretFile = try arguments.value(ServerOptions.secretFile)
        json = arguments.has(OutputOptions.json)
        if database == nil {
            if organization != nil { throw UsageError("--organization needs --db: through the server, the checkpoint is your organization's") }
            if secretFile != nil { throw UsageError("--secret-file needs --db: the server keeps its own") }
        } else {
            if organization == nil { throw UsageError("--organization is required with --db") }
            if json { throw UsageError("--json is for the server's answer; with --db there is none") }
        }
    }

    func run(_ context: CommandContext) throws -> Int32 {
        guard let database, let organization else {
            let checkpoint = try context.core().online { api, token throws(ClientError) in
                try api.createCheckpoint(token: token, name: name)
            }
            context.terminal.out(json ? ClientCommands.json(checkpoint)
                                      : TerminalText.visible("added checkpoint \(checkpoint.name); id \(checkpoint.id)"))
            return 0
        }
        try AdministrationCommands.requireExisting(database, hint: "; create it with 'gatepass user add' first")
        let checkpoint = try AdministrationCommands.withStore(database, secretFile: secretFile) { store, audit in
            try Administration.addCheckpoint(store: store, organization: organization, name: name, now: Date(), audit: audit)
        }
        context.terminal.out(visible: "added checkpoint \(checkpoint.name) to \(organization); id \(checkpoint.id)")
        return 0
    }
}

struct CheckpointRenameCommand: GatePassCommand {
    static let name = Option<String>("--name", value: "N", required: true, help: "The new name, unique in the organization.")
    static let configuration = CommandConfiguration(
        name: "gatepass checkpoint rename", overview: "Rename a checkpoint of your organization (OWNER/ADMIN).",
        arguments: [GateCommands.checkpoint.spec], options: [name, OutputOptions.flag("Print the checkpoint as the API shapes it.")])

    var id: String
    var name: String
    var json: Bool
    init(parsing arguments: ParsedArguments) throws(UsageError) {
        id = try arguments.required(GateCommands.checkpoint)
        name = try arguments.required(Self.name)
        json = arguments.has(OutputOptions.json)
    }

    func run(_ context: CommandContext) throws -> Int32 {
        try GateCommands.update(id, CheckpointChanges(name: name), json: json, context)
    }
}

struct CheckpointRetireCommand: GatePassCommand {
    static let undo = Flag("--undo", help: "Bring a retired checkpoint back (its old tokens stay ended).")
    static let configuration = CommandConfiguration(
        name: "gatepass checkpoint retire",
        overview: "Retire a checkpoint of your organization (OWNER/ADMIN): its scanner tokens and enrolled kiosks stop at once, and it gets no new ones. The default checkpoint cannot be retired.",
        arguments: [GateCommands.checkpoint.spec], options: [undo, OutputOptions.flag("Print the checkpoint as the API shapes it.")])

    var id: String
    var retired: Bool
    var json: Bool
    init(parsing arguments: ParsedArguments) throws(UsageError) {
        id = try arguments.required(GateCommands.checkpoint)
        retired = !arguments.has(Self.undo)
        json = arguments.has(OutputOptions.json)
    }

    func run(_ context: CommandContext) throws -> Int32 {
        try GateCommands.update(id, CheckpointChanges(retired: retired), json: json, context)
    }
}

struct ScannerTokenListCommand: GatePassCommand {
    static let limit = PageOptions.limit(of: "tokens")
    static let configuration = CommandConfiguration(
        name: "gatepass scanner-token list",
        overview: "The live scanner tokens of your organization, newest first (OWNER/ADMIN): people's and enrolled kiosks', with their checkpoint and last use (recorded at most once a minute).",
        options: [limit, OutputOptions.flag("Print the API's page: {\"items\": [{id, checkpointId, createdBy, createdAt, expiresAt, lastUsedAt, kioskName}], \"nextCursor\"}.")])

    var limit: Int
    var json: Bool
    init(parsing arguments: ParsedArguments) throws(UsageError) {
        limit = try arguments.value(Self.limit) ?? PageOptions.defaultLimit
        json = arguments.has(OutputOptions.json)
    }

    func run(_ context: CommandContext) throws -> Int32 {
        let core = try context.core()
        let page = try core.online { api, token throws(ClientError) in try api.scannerTokens(token: token, limit: limit) }
        if json {
            context.terminal.out(ClientCommands.json(page))
        } else {
            let clock = try SiteCommands.clock(core)
            let names = NameDirectory(core)
            context.terminal.out(SiteCommands.zoneLine(clock))
            for token in page.items { context.terminal.out(visible: try GateCommands.describe(token, clock, names)) }
            PageOptions.noteMore(page, of: "scanner tokens", on: context.terminal)
        }
        return 0
    }
}

struct ScannerTokenRevokeCommand: GatePassCommand {
    static let token = Argument<String>("ID", missing: "the scanner token's id is required",
                                        help: "The token's id (see gatepass scanner-token list).")
    static let configuration = CommandConfiguration(
        name: "gatepass scanner-token revoke",
        overview: "Revoke a scanner token (OWNER/ADMIN): its next request is refused with REVOKED and its kiosk shows that it was signed out and waits for a new enrolment. The person's login is untouched (to stop it too, disable the user).",
        arguments: [token.spec])

    var id: String
    init(parsing arguments: ParsedArguments) throws(UsageError) { id = try arguments.required(Self.token) }

    func run(_ context: CommandContext) throws -> Int32 {
        try context.core().online { api, token throws(ClientError) in try api.revokeScannerToken(token: token, id: id) }
        context.terminal.out(visible: "revoked scanner token \(id)")
        return 0
    }
}

struct KioskEnrolCodeCommand: GatePassCommand {
    static let checkpoint = Option<String>("--checkpoint", value: "ID", required: true,
                                           help: "The checkpoint the kiosk will stand at (see gatepass checkpoint list).")
    static let name = Option<String>("--name", value: "N", required: true, help: "The kiosk's name, as the token list shows it.")
    static let configuration = CommandConfiguration(
        name: "gatepass kiosk enrol-code",
        overview: "Make a one-time enrolment code for a kiosk at a checkpoint (OWNER/ADMIN). It works once, for 10 minutes: on the kiosk, run gatepass kiosk enrol CODE --server URL.",
        options: [checkpoint, name, OutputOptions.flag("Print {id, enrolmentCode, expiresAt}.")])

    var checkpoint: String
    var name: String
    var json: Bool
    init(parsing arguments: ParsedArguments) throws(UsageError) {
        checkpoint = try arguments.required(Self.checkpoint)
        name = try arguments.required(Self.name)
        json = arguments.has(OutputOptions.json)
    }

    func run(_ context: CommandContext) throws -> Int32 {
        let core = try context.core()
        let code = try core.online { api, token throws(ClientError) in
            try api.createKioskEnrolment(token: token, checkpointId: checkpoint, name: name)
        }
        if json {
            context.terminal.out(ClientCommands.json(code))
        } else {
            context.terminal.out(visible: "\(code.enrolmentCode)  (one use, until \(try OfficeCommands.SiteZone(core).clock().stamped(code.expiresAt.date)); on the kiosk: gatepass kiosk enrol \(code.enrolmentCode) --server URL)")
        }
        return 0
    }
}

struct KioskEnrolCommand: GatePassCommand {
    static let code = Argument<String>("CODE", missing: "the enrolment code is required",
                                       help: "The one-time code an admin made with gatepass kiosk enrol-code.")
    static let server = Option<String>("--server", value: "URL", required: true, help: "The Gate Pass server, e.g. https://gatepass.example.com.")
    static let configuration = CommandConfiguration(
        name: "gatepass kiosk enrol",
        overview: "Enrol this device as a gate's kiosk with a one-time code: the credential (bound to the gate, not to a person: no logout or disable of a user stops it) is kept in the state file, and gatepass kiosk then runs without a login. " + ServerOptions.stateNote,
        arguments: [code.spec], options: [server])

    var code: String
    var server: String
    init(parsing arguments: ParsedArguments) throws(UsageError) {
        code = try arguments.required(Self.code)
        server = try arguments.required(Self.server)
    }

    func run(_ context: CommandContext) throws -> Int32 {
        let enrolment = try context.core(platform: "kiosk").enrolKiosk(server: server, code: code)
        context.terminal.out(visible: "enrolled as the kiosk of \(enrolment.scanner.checkpoint.name) on \(enrolment.server); credential valid until \(enrolment.scanner.expiresAt)")
        return 0
    }
}
