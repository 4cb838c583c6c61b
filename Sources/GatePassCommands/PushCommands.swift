import Foundation
import GatePassClient
import GatePassCore
import GatePassServer

/// `gatepass push-test` and `gatepass push-deliveries`: the push-token registry for operators,
/// on the database file (`--db`) or through a server as a logged-in OWNER/ADMIN (`--server`).
enum PushCommands {
    static let testHelp = HelpText(
        overview: "Send push.test to every registered device token (or one) and report, per token, whether a connected event stream received it.",
        usage: "gatepass push-test [--db PATH | --server URL] [--token T] [--wait SECONDS] [--json]",
        options: [
            ("--db PATH", "Work on this database file. A server running on the same file delivers the tests to its streams."),
            ("--server URL", "Ask this server (default: the one this device is logged in to, as an OWNER or ADMIN)."),
            ("--token T", "Only this device token."),
            ("--wait SECONDS", "How long to wait for the deliveries (default 3, at most 30)."),
            ("--json", "Print the outcomes as JSON."),
        ])

    static let deliveriesHelp = HelpText(
        overview: "List the push deliveries of one device token, newest first: pending, delivered or failed.",
        usage: "gatepass push-deliveries --token T [--db PATH | --server URL] [--limit N] [--json]",
        options: [
            ("--token T", "The device token."),
            ("--db PATH", "Read this database file."),
            ("--server URL", "Ask this server (default: the one this device is logged in to, as an OWNER or ADMIN)."),
            ("--limit N", "How many (default 50, at most 500)."),
            ("--json", "Print the deliveries as JSON."),
        ])

    static func test(_ arguments: [String], terminal: any Terminal, environment: [String: String],
                     clock: any WallClock) throws -> Int32 {
        var reader = ArgumentReader(arguments)
        if reader.wantsHelp { terminal.out(testHelp.rendered); return 0 }
        let database = try reader.option("--db")
        let server = try reader.option("--server")
        let token = try reader.option("--token")
        let waitText = try reader.option("--wait")
        let asJSON = reader.flag("--json")
        try reader.finish()
        guard database == nil || server == nil else { throw UsageError("choose one of --db and --server") }
        let wait = try waitText.map { text throws(UsageError) -> Double in
            guard let value = Double(text), value.isFinite, (0...30).contains(value) else {
                throw UsageError("--wait must be a number of seconds from 0 to 30")
            }
            return value
        } ?? 3
        let outcomes: [PushTestOutcome]
        if let database {
            let store = try openExisting(database)
            defer { store.close() }
            do {
                outcomes = try PushRegistry.test(store: store, token: token, wait: .milliseconds(Int(wait * 1000)), now: clock.now())
            } catch {
                throw CommandFailure("push-test on \(database) failed: \(error)")
            }
        } else {
            let context = ClientCommands.Context(terminal: terminal, environment: environment, clock: clock)
            do {
                // The server answers after the wait: give the request that long on top.
                outcomes = try context.core(extraRequestTime: wait).pushTest(server: server, deviceToken: token, waitSeconds: wait)
            } catch let error as ClientError {
                throw CommandFailure(ClientCommands.sentence(for: error))
            }
        }
        if asJSON {
            terminal.out(ClientCommands.json(outcomes))
        } else if outcomes.isEmpty {
            terminal.out("no device tokens are registered")
        } else {
            for outcome in outcomes {
                let who = [outcome.email, outcome.platform].compactMap { $0 }.joined(separator: ", ")
                let detail = outcome.detail.map { " (\($0))" } ?? ""
                terminal.out(visible: "\(outcome.token)\(who.isEmpty ? "" : "  [\(who)]")  \(outcome.status.rawValue)\(detail)")
            }
        }
        // A test that could not even be sent is a failure; an unconnected device is an answer.
        return outcomes.contains { $0.status == .error } ? 1 : 0
    }

    static func deliveries(_ arguments: [String], terminal: any Terminal, environment: [String: String],
                           clock: any WallClock) throws -> Int32 {
        var reader = ArgumentReader(arguments)
        if reader.wantsHelp { terminal.out(deliveriesHelp.rendered); return 0 }
        let token = try reader.requiredOption("--token")
        let database = try reader.option("--db")
        let server = try reader.option("--server")
        let limit = try reader.integerOption("--limit", in: 1...500) ?? 50
        let asJSON = reader.flag("--json")
        try reader.finish()
        guard database == nil || server == nil else { throw UsageError("choose one of --db and --server") }
        let rows: [PushDelivery]
        if let database {
            let store = try openExisting(database)
            defer { store.close() }
            rows = try PushRegistry.deliveries(store: store, token: token, limit: limit)
        } else {
            let context = ClientCommands.Context(terminal: terminal, environment: environment, clock: clock)
            do {
                rows = try context.core().pushDeliveries(server: server, deviceToken: token, limit: limit)
            } catch let error as ClientError {
                throw CommandFailure(ClientCommands.sentence(for: error))
            }
        }
        if asJSON {
            terminal.out(ClientCommands.json(rows))
        } else if rows.isEmpty {
            terminal.out("no deliveries for this token")
        } else {
            for row in rows {
                let finished = row.finishedAt.map { "  \(row.status) at \($0)" } ?? ""
                terminal.out(visible: "\(row.createdAt)  event \(row.eventId)  \(row.kind)  \(row.status)\(finished)")
            }
        }
        return 0
    }

    /// Opens a database that must already exist (these commands never create one).
    static func openExisting(_ path: String) throws -> ServerDatabase {
        guard FileManager.default.fileExists(atPath: path) else {
            throw CommandFailure("no database at \(path)")
        }
        return try AdministrationCommands.openStore(path)
    }
}
