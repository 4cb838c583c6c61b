import Foundation
import GatePassCore
import GatePassServer

/// `gatepass user add` and `gatepass checkpoint add`: bootstrapping on the database file.
enum AdministrationCommands {
    static let database = ServerOptions.database("The SQLite database file (created if missing).", required: true)
    static let organization = Option<String>("--organization", value: "NAME", required: true, help: "The organization's name.")

    /// `gatepass user …` and `gatepass checkpoint …` have one subcommand each, `add`; their
    /// own `--help` is that of `add`.
    static func group<Command: GatePassCommand>(_ name: String, _ command: Command.Type, _ arguments: [String],
                                                _ context: CommandContext) throws -> Int32 {
        switch arguments.first {
        case "add": return try Command.main(Array(arguments.dropFirst()), context)
        case "--help", "-h": return try Command.main(["--help"], context)
        default: throw UsageError("the \(name) command has one subcommand: gatepass \(name) add")
        }
    }

    /// Runs `body` on the database file, closed after; an administration rule it breaks is a
    /// failure in one sentence.
    static func withStore<T>(_ path: String, _ body: (ServerDatabase) throws -> T) throws -> T {
        let store = try openStore(path)
        defer { store.close() }
        do {
            return try body(store)
        } catch let failure as Administration.Failure {
            throw CommandFailure(failure.message)
        }
    }

    static func openStore(_ path: String) throws -> ServerDatabase {
        do {
            return try ServerDatabase(path: path)
        } catch {
            throw CommandFailure("cannot open the database \(path): \(error)")
        }
    }
}

struct UserAddCommand: GatePassCommand {
    static let email = Option<String>("--email", value: "E", required: true,
                                      help: "The user's email; they log in with a code sent to it.")
    static let name = Option<String>("--name", value: "N", required: true, help: "The user's full name.")
    static let role = Option<Role>("--role", value: "R", required: true,
                                   help: "OWNER, ADMIN, APPROVER or PLATFORM_ADMIN.") { (text: String) throws(UsageError) in
        guard let role = Role(rawValue: text.uppercased()) else {
            throw UsageError("--role must be OWNER, ADMIN, APPROVER or PLATFORM_ADMIN")
        }
        return role
    }
    static let organization = Option<String>(
        "--organization", value: "NAME",
        help: "The organization (default: \"Default\"); created with a \"Main gate\" checkpoint if new.")
    static let canScan = Flag("--can-scan", help: "Let an APPROVER obtain scanner tokens (owners and admins always can).")
    static let configuration = CommandConfiguration(
        name: "gatepass user add", overview: "Add a user to a Gate Pass database file, creating its organization if needed.",
        usage: "gatepass user add --db PATH --email E --name N --role OWNER|ADMIN|APPROVER|PLATFORM_ADMIN [--organization NAME] [--can-scan]",
        options: [AdministrationCommands.database, email, name, role, organization, canScan])

    var database: String
    var email: String
    var name: String
    var role: Role
    var organization: String
    var canScan: Bool

    init(parsing arguments: ParsedArguments) throws(UsageError) {
        database = try arguments.required(AdministrationCommands.database)
        email = try arguments.required(Self.email)
        name = try arguments.required(Self.name)
        role = try arguments.required(Self.role)
        organization = try arguments.value(Self.organization) ?? "Default"
        canScan = arguments.has(Self.canScan)
    }

    func run(_ context: CommandContext) throws -> Int32 {
        let user = try AdministrationCommands.withStore(database) { store in
            try Administration.addUser(store: store, email: email, name: name, role: role,
                                       organization: organization, canScan: canScan, now: Date())
        }
        context.terminal.out(visible: "added \(user.email) (\(user.role.rawValue)\(user.principalKind.mayScan ? ", can scan" : "")) to \(organization); id \(user.id)")
        return 0
    }
}

struct CheckpointAddCommand: GatePassCommand {
    static let database = ServerOptions.database("The SQLite database file.", required: true)
    static let name = Option<String>("--name", value: "N", required: true, help: "The checkpoint's name, unique in its organization.")
    static let configuration = CommandConfiguration(
        name: "gatepass checkpoint add", overview: "Add a checkpoint (a gate) to an organization in a Gate Pass database file.",
        options: [database, AdministrationCommands.organization, name])

    var database: String
    var organization: String
    var name: String

    init(parsing arguments: ParsedArguments) throws(UsageError) {
        database = try arguments.required(Self.database)
        organization = try arguments.required(AdministrationCommands.organization)
        name = try arguments.required(Self.name)
    }

    func run(_ context: CommandContext) throws -> Int32 {
        guard FileManager.default.fileExists(atPath: database) else {
            throw CommandFailure("no database at \(database); create it with 'gatepass user add' first")
        }
        let checkpoint = try AdministrationCommands.withStore(database) { store in
            try Administration.addCheckpoint(store: store, organization: organization, name: name, now: Date())
        }
        context.terminal.out(visible: "added checkpoint \(checkpoint.name) to \(organization); id \(checkpoint.id)")
        return 0
    }
}
