import Foundation
import GatePassClient
import GatePassCore
import GatePassServer

/// `gatepass push-test` and `gatepass push-deliveries`: the push-token registry for operators,
/// on the database file (`--db`) or through a server as a logged-in OWNER/ADMIN (`--server`).
enum PushCommands {
    static let server = ServerOptions.server("Ask this server (default: the one this device is logged in to, as an OWNER or ADMIN).")
    static let token = Option<String>("--token", value: "T", help: "Only this device token.")

    /// Where the registry is: a database file (`--db`) or a server (`--server`, or the one
    /// this device is logged in to) — one at most.
    struct Registry {
        var database: String?
        var server: String?

        init(_ arguments: ParsedArguments, database option: Option<String>) throws(UsageError) {
            database = try arguments.value(option)
            server = try arguments.value(PushCommands.server)
            guard database == nil || server == nil else { throw UsageError("choose one of --db and --server") }
        }
    }

    /// Opens a database that must already exist (these commands never create one).
    static func openExisting(_ path: String) throws -> ServerDatabase {
        try AdministrationCommands.requireExisting(path)
        return try AdministrationCommands.openStore(path)
    }
}

struct PushTestCommand: GatePassCommand {
    static let database = ServerOptions.database("Work on this database. A server running on the same database delivers the tests to its streams.")
    static let wait = Option<Double>("--wait", value: "SECONDS", seconds: 0...30,
                                     help: "How long to wait for the deliveries (default 3, at most 30).")
    static let configuration = CommandConfiguration(
        name: "gatepass push-test",
        overview: "Send push.test to every registered device token (or one) and report, per token, whether a connected event stream received it.",
        usage: "gatepass push-test [--db PATH|URL | --server URL] [--token T] [--wait SECONDS] [--json]",
        options: [database, PushCommands.server, PushCommands.token, wait, OutputOptions.flag("Print the outcomes as JSON.")])

    var registry: PushCommands.Registry
    var token: String?
    var wait: Double
    var json: Bool

    init(parsing arguments: ParsedArguments) throws(UsageError) {
        registry = try PushCommands.Registry(arguments, database: Self.database)
        token = try arguments.value(PushCommands.token)
        wait = try arguments.value(Self.wait) ?? 3
        json = arguments.has(OutputOptions.json)
    }

    func run(_ context: CommandContext) throws -> Int32 {
        let outcomes: [PushTestOutcome]
        let (database, server) = (registry.database, registry.server)
        if let database {
            let store = try PushCommands.openExisting(database)
            defer { store.close() }
            do {
                outcomes = try PushRegistry.test(store: store, token: token, wait: .milliseconds(Int(wait * 1000)), now: context.clock.now())
            } catch {
                throw CommandFailure("push-test on \(database) failed: \(error)")
            }
        } else {
                        do {
                // The server answers after the wait: give the request that long on top.
                outcomes = try context.core(extraRequestTime: wait).pushTest(server: server, deviceToken: token, waitSeconds: wait)
            } catch let error as ClientError {
                throw CommandFailure(ClientCommands.sentence(for: error))
            }
        }
        if json {
            context.terminal.out(ClientCommands.json(outcomes))
        } else if outcomes.isEmpty {
            context.terminal.out("no device tokens are registered")
        } else {
            for outcome in outcomes {
                let who = [outcome.email, outcome.platform].compactMap { $0 }.joined(separator: ", ")
                let detail = outcome.detail.map { " (\($0))" } ?? ""
                context.terminal.out(visible: "\(outcome.token)\(who.isEmpty ? "" : "  [\(who)]")  \(outcome.status.rawValue)\(detail)")
            }
        }
        // A test that could not even be sent is a failure; an unconnected device is an answer.
        return outcomes.contains { $0.status == .error } ? 1 : 0
    }
}

struct PushDeliveriesCommand: GatePassCommand {
    static let token = Option<String>("--token", value: "T", required: true, help: "The device token.")
    static let database = ServerOptions.database("Read this database.")
    static let limit = PageOptions.limit(of: nil)
    static let configuration = CommandConfiguration(
        name: "gatepass push-deliveries",
        overview: "List the push deliveries of one device token, newest first: pending, delivered or failed.",
        usage: "gatepass push-deliveries --token T [--db PATH|URL | --server URL] [--limit N] [--json]",
        options: [token, database, PushCommands.server, limit, OutputOptions.flag("Print the deliveries as JSON.")])

    var token: String
    var registry: PushCommands.Registry
    var limit: Int
    var json: Bool

    init(parsing arguments: ParsedArguments) throws(UsageError) {
        token = try arguments.required(Self.token)
        registry = try PushCommands.Registry(arguments, database: Self.database)
        limit = try arguments.value(Self.limit) ?? PageOptions.defaultLimit
        json = arguments.has(OutputOptions.json)
    }

    func run(_ context: CommandContext) throws -> Int32 {
        let rows: [PushDelivery]
        let more: Bool
        let (database, server) = (registry.database, registry.server)
        if let database {
            let store = try PushCommands.openExisting(database)
            defer { store.close() }
            // One row past the page tells whether the log goes on.
            let read = try PushRegistry.deliveries(store: store, token: token, limit: limit + 1)
            rows = Array(read.prefix(limit))
            more = read.count > limit
        } else {
            do {
                let page = try context.core().pushDeliveries(server: server, deviceToken: token, limit: limit)
                rows = page.items
                more = page.nextCursor != nil
            } catch let error as ClientError {
                throw CommandFailure(ClientCommands.sentence(for: error))
            }
        }
        if json {
            context.terminal.out(ClientCommands.json(rows))
        } else if rows.isEmpty {
            context.terminal.out("no deliveries for this token")
        } else {
            for row in rows {
                let finished = row.finishedAt.map { "  \(row.status) at \($0)" } ?? ""
                context.terminal.out(visible: "\(row.createdAt)  event \(row.eventId)  \(row.kind)  \(row.status)\(finished)")
            }
        }
        // Also with --json: its plain array (this command's shape from the start) has no cursor to say it.
        PageOptions.noteMore(shown: rows.count, hasMore: more, of: "deliveries", on: context.terminal)
        return 0
    }
}
