import Foundation
import GatePassClient
import GatePassCore

/// `gatepass events`: follows the live event stream with the client core's consumer, the
/// same one the console and kiosk use, and prints one line per event.
struct EventsCommand: GatePassCommand {
    static let scanner = Flag("--scanner", help: "Follow the scanner token's checkpoint instead of the user.")
    static let configuration = CommandConfiguration(
        name: "gatepass events",
        overview: "Follow the live events of the logged-in user (or, with --scanner, of this device's checkpoint) until Ctrl-C. Resumes after the last event this device saw; reconnects by itself.",
        options: [scanner, OutputOptions.flag("Print each event as one JSON object: {id, kind, data}.")])

    var scanner: Bool
    var asJSON: Bool

    init(parsing arguments: ParsedArguments) {
        scanner = arguments.has(Self.scanner)
        asJSON = arguments.has(OutputOptions.json)
    }

    func run(_ context: CommandContext) throws -> Int32 {
        let terminal = context.terminal
        let termination = TerminationSignals()
        let endedBySession = Locked<ClientError?>(nil)
        let consumer: EventStreamConsumer
        do {
            consumer = try context.core().eventConsumer(
                credential: scanner ? .scanner : .login,
                onStatus: { status in
                    switch status {
                    case .connecting: break
                    case .connected: terminal.err("live")
                    case .waiting(let retryIn, let error):
                        terminal.err(visible: "offline (\(ClientCommands.sentence(for: error))); retrying in \(Int(retryIn.rounded(.up))) s")
                    case .stopped(let reason):
                        if let reason {
                            endedBySession.withLock { $0 = reason }
                            termination.interrupt()
                        }
                    }
                },
                onEvent: { event in asJSON ? terminal.out(Self.json(event)) : terminal.out(visible: Self.line(event)) })
        } catch let error as ClientError {
            throw CommandFailure(ClientCommands.sentence(for: error))
        }
        consumer.start()
        termination.wait()
        consumer.stop()
        if let reason = endedBySession.withLock({ $0 }) {
            throw CommandFailure(ClientCommands.sentence(for: reason))
        }
        return 0
    }

    static func json(_ event: ServerEvent) -> String {
        let data = (try? JSONSerialization.jsonObject(with: Data(event.data.utf8))) ?? event.data
        let object: [String: Any] = ["id": event.id.map { $0 as Any } ?? NSNull(), "kind": event.kindName, "data": data]
        guard let bytes = try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes]) else {
            return "{}"
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// `12  visitor.awaiting  Eve Smoke (K7Q2M9XD) AWAITING_APPROVAL`
    static func line(_ event: ServerEvent) -> String {
        let id = event.id.map(String.init) ?? "-"
        let summary: String
        switch try? event.payload() {
        case .visitor(let data): summary = "\(data.visitor.name) (\(data.visitor.shortId.rawValue)) \(data.visitor.status.rawValue)"
        case .notification(let item): summary = item.title + (item.readAt == nil ? "" : " (read)")
        case .notificationDeleted(let id): summary = "notification \(id) deleted"
        case .pushTest(let data): summary = data.message
        case .gap: summary = "events were missed (older than the server keeps): reload lists"
        case .unknown, nil: summary = event.data
        }
        return "\(id)  \(event.kindName)  \(summary)"
    }
}
