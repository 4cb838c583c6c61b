import Foundation
import GatePassClient
import GatePassCore

/// `gatepass checkpoint …`, `gatepass scanner-token …` and `gatepass kiosk enrol-code`: the
/// gates an OWNER/ADMIN manages through the API (as logged in with `gatepass login`);
/// `checkpoint add --db` bootstraps a database file.
enum GateCommands {
    static let checkpointMembers: [GatePassCLI.Subcommand] = [
        .init("list", "The organization's checkpoints: name, default, retired, id.", CheckpointListCommand.self),
        .init("add", "Add a checkpoint to an organization in a database file (bootstrapping).", CheckpointAddCommand.self),
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

    static func describe(_ token: ScannerTokenSummary) -> String {
        let who = token.kioskName.map { "kiosk \($0)" } ?? "user \(token.createdBy)"
        return "\(token.id)  checkpoint \(token.checkpointId)  \(who)  last used \(token.lastUsedAt?.description ?? "never")"
            + "  expires \(token.expiresAt)"
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
        let page = try context.core().online { api, token throws(ClientError) in try api.scannerTokens(token: token, limit: limit) }
        if json {
            context.terminal.out(ClientCommands.json(page))
        } else {
            for token in page.items { context.terminal.out(visible: GateCommands.describe(token)) }
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
