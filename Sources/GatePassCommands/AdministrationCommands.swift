import Foundation
import GatePassCore
import GatePassServer

/// `gatepass user add --db` and `gatepass checkpoint add --db`: bootstrapping on the database file.
enum AdministrationCommands {
    static let organization = Option<String>("--organization", value: "NAME", required: true, help: "The organization's name.")

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
