import Foundation
import GatePassClient
import GatePassCore

/// `gatepass outbox`: inspect and replay the mutations made while the server was unreachable.
struct OutboxCommand: GatePassCommand {
    static let actionMissing = "outbox needs one of: list, dead, drain, retry ID, watch"
    static let action = Argument<String>("ACTION", missing: actionMissing,
                                         help: "list, dead, drain, retry or watch (see SUBCOMMANDS).")
    static let entryID = Argument<Int64>("ID", optional: true, help: "With retry: the entry's number, from list or dead.") {
        (text: String) throws(UsageError) in
        guard let id = Int64(text) else { throw UsageError("ID must be an entry number from gatepass outbox list or dead") }
        return id
    }
    static let interval = Option<Int>("--interval", value: "S", in: 1...86_400,
                                      help: "With watch: seconds between drains (default 30).")
    static let configuration = CommandConfiguration(
        name: "gatepass outbox",
        overview: "Inspect and replay mutations made while the server was unreachable.",
        usage: "gatepass outbox list|dead|drain|retry ID|watch [--interval S] [--json]",
        arguments: [action.spec, entryID.spec], options: [interval, OutputOptions.json],
        subcommands: [("list", "Queued entries, oldest first."),
                      ("dead", "Entries the server refused for good, with its error."),
                      ("drain", "Replay now; exits 0 when the queue is empty or only waits for backoff."),
                      ("retry ID", "Put a dead or waiting entry back in the queue, due now."),
                      ("watch", "Keep draining until SIGTERM/SIGINT: every interval, and at once when the server comes back.")])

    var action: String
    var entry: Int64?
    var interval: Int?
    var json: Bool

    init(parsing arguments: ParsedArguments) throws(UsageError) {
        action = try arguments.required(Self.action)
        entry = try arguments.value(Self.entryID)
        interval = try arguments.value(Self.interval)
        json = arguments.has(OutputOptions.json)
    }

    func validate() throws(UsageError) {
        guard ["list", "dead", "drain", "retry", "watch"].contains(action) else { throw UsageError(Self.actionMissing) }
        if action != "retry", let entry { throw UsageError("unexpected argument \(entry); only retry takes an ID") }
        if action != "watch", interval != nil { throw UsageError("--interval goes with outbox watch") }
    }

    func run(_ context: CommandContext) throws -> Int32 {
        let core = try context.core()
        let now = context.clock.now()
        switch action {
        case "list":
            let entries = try core.store.outboxEntries()
            if json { context.terminal.out(ClientCommands.json(entries.map(EntryView.init))); return 0 }
            if entries.isEmpty { context.terminal.out("the outbox is empty"); return 0 }
            for entry in entries {
                let due = entry.nextAttemptAt > now ? "next try in \(ClientCommands.age(now, now: entry.nextAttemptAt))" : "due now"
                context.terminal.out(visible: "\(entry.id)  \(entry.kind)  \(entry.method) \(entry.url)  attempts \(entry.attempts)  \(due)\(entry.lastError.map { "  last error: \($0)" } ?? "")")
            }
            return 0
        case "dead":
            let dead = try core.store.deadLetters()
            if json {
                context.terminal.out(ClientCommands.json(dead.map { DeadView(entry: EntryView($0.entry), status: $0.status, errorCode: $0.errorCode,
                                                              errorMessage: $0.errorMessage, deadAt: Timestamp($0.deadAt)) }))
                return 0
            }
            if dead.isEmpty { context.terminal.out("no dead letters"); return 0 }
            for letter in dead {
                context.terminal.out(visible: "\(letter.entry.id)  \(letter.entry.kind)  \(letter.entry.method) \(letter.entry.url)  \(letter.status) \(letter.errorCode): \(letter.errorMessage)")
            }
            return 0
        case "drain":
            let report = core.drainer.drain(ignoringBackoff: true)
            if let failure = report.failure { throw CommandFailure("the drain stopped: \(failure)") }
            if report.busy { throw CommandFailure("another process is draining this outbox; try again in a moment") }
            var view = DrainView(report)
            view.entries = DrainedEntry.all(report, deadLetters: try core.store.deadLetters())
            if json {
                context.terminal.out(ClientCommands.json(view))
            } else {
                Self.printDecisions(report, view.entries ?? [], on: context.terminal)
                if report.offline { context.terminal.out("the server is unreachable") }
                if let next = view.nextAttemptAt, report.remaining > 0 {
                    context.terminal.out("\(report.remaining) entries wait for backoff; next attempt at \(next)")
                }
            }
            if let reason = report.pausedForLogin {
                throw CommandFailure("the server refused the session (\(reason)); log in again, then drain")
            }
            return 0
        case "watch":
            return Self.watch(core, interval: TimeInterval(interval ?? 30), asJSON: json, context)
        case "retry":
            guard let id = entry else { throw UsageError("ID is required") }
            guard try core.store.retry(id: id, now: now) else { throw CommandFailure("no outbox or dead entry \(id)") }
            context.terminal.out("entry \(id) is queued and due now; run gatepass outbox drain to send it")
            return 0
        default:
            throw UsageError(Self.actionMissing)
        }
    }

    /// The summary of a drain that sent something, then what the server decided for each entry
    /// (`checkin K7Q2M9XD: CHECKED_IN (Ana Pop)`), as `drain` and `watch` print it.
    static func printDecisions(_ report: DrainReport, _ entries: [DrainedEntry], on terminal: any Terminal) {
        terminal.out("sent \(report.applied.count), dead-lettered \(report.deadLettered.count), \(report.remaining) left")
        for entry in entries { terminal.out(visible: entry.line) }
        if !report.deadLettered.isEmpty { terminal.out("dead letters stay for review: gatepass outbox dead") }
    }

    /// `outbox watch`: the background drain of the console and kiosk, for a machine that
    /// only runs the scriptable commands. For each drain that did something, its summary and
    /// what the server decided for each entry, as `drain` prints them.
    static func watch(_ core: ClientCore, interval: TimeInterval, asJSON: Bool, _ context: CommandContext) -> Int32 {
        let termination = TerminationSignals()
        let terminal = context.terminal
        let service = OutboxService(core: core, interval: interval) { report, online in
            guard !report.applied.isEmpty || !report.deadLettered.isEmpty || report.pausedForLogin != nil || !online else { return }
            // The drain's own thread reads the dead letters it just wrote; a failed read only
            // leaves their reasons out of the lines.
            let entries = DrainedEntry.all(report, deadLetters: (try? core.store.deadLetters()) ?? [])
            if asJSON {
                var view = DrainView(report)
                view.offline = !online
                if online { view.entries = entries }
                terminal.out(ClientCommands.json(view))
            } else if !online {
                terminal.out("the server is unreachable; \(report.remaining) entries wait, probing /api/healthz")
            } else if let reason = report.pausedForLogin {
                terminal.out(visible: "paused: the server refused the session (\(reason)); log in again")
            } else {
                printDecisions(report, entries, on: terminal)
            }
        }
        terminal.err("draining every \(Int(interval)) s and whenever the server comes back; stop with Ctrl-C")
        service.start()
        termination.wait()
        service.stop()
        return 0
    }

    struct EntryView: Encodable {
        var id: Int64
        var kind: String
        var method: String
        var url: String
        var body: String?
        var createdAt: Timestamp
        var attempts: Int
        var lastError: String?
        var nextAttemptAt: Timestamp
        var scannedAt: Timestamp?
        var idempotencyKey: String
        init(_ entry: OutboxEntry) {
            id = entry.id; kind = entry.kind; method = entry.method; url = entry.url; body = entry.body
            createdAt = Timestamp(entry.createdAt); attempts = entry.attempts; lastError = entry.lastError
            nextAttemptAt = Timestamp(entry.nextAttemptAt); scannedAt = entry.scannedAt.map(Timestamp.init)
            idempotencyKey = entry.idempotencyKey
        }
    }

    struct DeadView: Encodable {
        var entry: EntryView
        var status: Int
        var errorCode: String
        var errorMessage: String
        var deadAt: Timestamp
    }

    struct DrainView: Encodable {
        var applied: Int
        var deadLettered: Int
        var deferred: Int
        var waiting: Int
        var remaining: Int
        var offline: Bool
        var pausedForLogin: String?
        var nextAttemptAt: Timestamp?
        /// What the server decided for each entry sent (`drain`, and `watch` while online).
        var entries: [DrainedEntry]?

        init(_ report: DrainReport) {
            applied = report.applied.count
            deadLettered = report.deadLettered.count
            deferred = report.deferred.count
            waiting = report.waiting.count
            remaining = report.remaining
            offline = report.offline
            pausedForLogin = report.pausedForLogin
            nextAttemptAt = (report.deferred + report.waiting).map(\.nextAttemptAt).min().map(Timestamp.init)
        }
    }
}

/// One entry a drain sent, and what the server decided: `checkin K7Q2M9XD: CHECKED_IN (Ana Pop)`,
/// `checkin ZZZZZZZZ: dead-lettered: no visitor has this pass`.
struct DrainedEntry: Encodable, Equatable {
    var id: Int64
    var kind: String
    /// What the entry was about: the short id of a check-in or check-out, a walk-in's name, a
    /// decision's visitor id.
    var subject: String
    /// The server's result (`CHECKED_IN`, `NOT_CHECKED_IN`, `AWAITING_APPROVAL`, a visitor's status).
    var result: String?
    var visitorName: String?
    /// For a dead letter: the server's error.
    var errorCode: String?
    var errorMessage: String?

    var line: String {
        let head = subject.isEmpty ? kind : "\(kind) \(subject)"
        if let errorMessage { return "\(head): dead-lettered: \(errorMessage)" }
        guard let result else { return "\(head): sent" }
        return "\(head): \(result)" + (visitorName.map { " (\($0))" } ?? "")
    }

    static func all(_ report: DrainReport, deadLetters: [DeadLetter]) -> [DrainedEntry] {
        let letters = Dictionary(deadLetters.map { ($0.entry.id, $0) }, uniquingKeysWith: { first, _ in first })
        return (report.applied.map { DrainedEntry(applied: $0, answer: report.answers[$0.id]) }
                + report.deadLettered.map { DrainedEntry(dead: $0, letter: letters[$0.id]) }).sorted { $0.id < $1.id }
    }

    init(applied entry: OutboxEntry, answer: [UInt8]?) {
        self.init(entry)
        guard let answer else { return }
        /// The fields every gate answer and a decided visitor share.
        struct Answer: Decodable {
            struct Named: Decodable { var name: String; var status: String }
            var result: String?
            var visitor: Named?
            var name: String?
            var status: String?
            /// A refusal delivered as the answer (an offline scan's INVALID / NOT_FOUND).
            var code: String?
        }
        guard let decoded = try? JSONDecoder().decode(Answer.self, from: Data(answer)) else { return }
        result = decoded.result ?? decoded.status ?? decoded.code
        visitorName = decoded.visitor?.name ?? decoded.name
    }

    init(dead entry: OutboxEntry, letter: DeadLetter?) {
        self.init(entry)
        errorCode = letter?.errorCode
        errorMessage = letter.map { "\($0.errorMessage) (\($0.status) \($0.errorCode))" } ?? "see gatepass outbox dead"
    }

    private init(_ entry: OutboxEntry) {
        id = entry.id
        kind = entry.kind
        /// The entry's own body: what a check-in, check-out or walk-in named.
        struct Body: Decodable { var shortId: String?; var name: String? }
        let body = entry.body.flatMap { try? JSONDecoder().decode(Body.self, from: Data($0.utf8)) }
        if let code = body?.shortId {
            subject = (try? QRPayload.reference(from: code).shortId.rawValue) ?? code
        } else if let name = body?.name {
            subject = name
        } else {
            subject = entry.url.split(separator: "/").dropLast().last.map(String.init) ?? ""
        }
    }
}
