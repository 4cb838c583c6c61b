import CurlHTTP
import Foundation
import GatePassClient
import GatePassCore

/// The scriptable client commands: login, logout, whoami, approvals, approve, reject,
/// checkin, checkout, lookup, walk-in, stats, history, outbox.
enum ClientCommands {
    static let names = ["login", "logout", "whoami", "approvals", "approve", "reject", "checkin", "checkout", "lookup",
                        "walk-in", "stats", "history", "outbox"]

    // MARK: - Help

    static let stateNote = "State lives in $GATEPASS_STATE_DIR (default $XDG_STATE_HOME/gatepass or ~/.local/state/gatepass)."
    static let jsonOption = ("--json", "Print the server's JSON answer instead of text.")

    static let helps: [String: HelpText] = [
        "login": HelpText(
            overview: "Log in with a one-time code sent to your email. Without --otp, sends the code and asks for it. \(stateNote)",
            usage: "gatepass login [--server URL] --email E [--otp CODE] [--force] [--ca-file FILE] [--json]",
            options: [("--server URL", "The Gate Pass server (default $GATEPASS_SERVER, else the last one used)."),
                      ("--email E", "Your email."),
                      ("--otp CODE", "Verify a code already sent instead of sending one."),
                      ("--force", "Log in even if another user's queued entries would be deleted."),
                      ("--ca-file FILE", "Trust the CA certificates in this PEM file (kept for later commands)."),
                      jsonOption]),
        "logout": HelpText(overview: "Unregister this device's push token, then end the session. Queued entries stay.",
                           usage: "gatepass logout"),
        "whoami": HelpText(overview: "Show who is logged in, on which server, and the device token.",
                           usage: "gatepass whoami [--json]", options: [jsonOption]),
        "approvals": HelpText(overview: "List visitors awaiting approval, newest request first (from the cache when offline).",
                              usage: "gatepass approvals [--json]", options: [jsonOption]),
        "approve": HelpText(overview: "Approve a visitor awaiting approval. Queued when the server is unreachable.",
                            usage: "gatepass approve ID [--note TEXT] [--json]",
                            options: [("--note TEXT", "A note kept with the decision."), jsonOption]),
        "reject": HelpText(overview: "Reject a visitor awaiting approval. Queued when the server is unreachable.",
                           usage: "gatepass reject ID [--note TEXT] [--json]",
                           options: [("--note TEXT", "A note kept with the decision."), jsonOption]),
        "checkin": HelpText(overview: "Check a pass in by short id or raw QR text. Queued when the server is unreachable.",
                            usage: "gatepass checkin CODE [--confirm-approval] [--json]",
                            options: [("--confirm-approval", "Request approval when the pass needs it."), jsonOption]),
        "checkout": HelpText(overview: "Check a visitor out by short id or raw QR text. Queued when the server is unreachable.",
                             usage: "gatepass checkout CODE [--json]", options: [jsonOption]),
        "lookup": HelpText(overview: "Find visitors by short id, name, phone or email (at most 20).",
                           usage: "gatepass lookup QUERY [--json]", options: [jsonOption]),
        "walk-in": HelpText(overview: "Register a visitor who arrived without a pass; they wait for approval.",
                            usage: "gatepass walk-in --name N [--phone P] [--email E] [--company C] [--purpose P] [--host H] [--json]",
                            options: [("--name N", "The visitor's full name."), ("--phone P", "Phone number."),
                                      ("--email E", "Email."), ("--company C", "Company."), ("--purpose P", "Purpose of the visit."),
                                      ("--host H", "Whom they visit."), jsonOption]),
        "stats": HelpText(overview: "Today's counters: checked in, checked out, awaiting approval, expected, on site.",
                          usage: "gatepass stats [--json]", options: [jsonOption]),
        "history": HelpText(overview: "The scan history, newest first (OWNER/ADMIN: the organization; scanners: theirs).",
                            usage: "gatepass history [--limit N] [--result R] [--from TIME] [--to TIME] [--csv | --json]",
                            options: [("--limit N", "How many scans (default 50, at most 500)."),
                                      ("--result R", "Only scans with this result, e.g. CHECKED_IN."),
                                      ("--from TIME", "Only scans at or after this RFC 3339 time."),
                                      ("--to TIME", "Only scans at or before this RFC 3339 time."),
                                      ("--csv", "Print the CSV export (OWNER/ADMIN)."), jsonOption]),
        "outbox": HelpText(overview: "Inspect and replay mutations made while the server was unreachable.",
                           usage: "gatepass outbox list|dead|drain|retry ID|watch [--interval S] [--json]",
                           options: [("--interval S", "With watch: seconds between drains (default 30)."), jsonOption],
                           subcommands: [("list", "Queued entries, oldest first."),
                                         ("dead", "Entries the server refused for good, with its error."),
                                         ("drain", "Replay now; exits 0 when the queue is empty or only waits for backoff."),
                                         ("retry ID", "Put a dead or waiting entry back in the queue, due now."),
                                         ("watch", "Keep draining until SIGTERM/SIGINT: every interval, and at once when the server comes back.")]),
    ]

    // MARK: - Context

    /// Everything a client command needs, built from the environment (no hidden globals).
    struct Context {
        let terminal: any Terminal
        let environment: [String: String]
        let clock: any WallClock

        /// - Parameter extraRequestTime: seconds added to the request timeout, for requests the
        ///   server answers late on purpose (push-test waits for its deliveries).
        func core(platform: String = "console", extraRequestTime: Double = 0) throws -> ClientCore {
            try coreAndTransport(platform: platform, extraRequestTime: extraRequestTime).core
        }

        /// The client core and the transport it uses (the console's services need both).
        func coreAndTransport(platform: String = "console",
                              extraRequestTime: Double = 0) throws -> (core: ClientCore, transport: any HTTPTransport) {
            let directory = StateDirectory.resolve(environment: environment)
            // The CA file named at login is kept, so later commands trust the same server.
            let store = try ClientDatabase(directory: directory)
            let storedCAFile = try store.meta("ca_file")
            let caFile = environment["GATEPASS_CA_FILE"] ?? storedCAFile
            let options = CurlSession.Options(connectTimeout: seconds("GATEPASS_CONNECT_TIMEOUT", default: 3),
                                              requestTimeout: seconds("GATEPASS_REQUEST_TIMEOUT", default: 10)
                                                  + .milliseconds(Int(extraRequestTime * 1000)),
                                              caFile: caFile)
            let transport = CurlSession(options: options)
            return (ClientCore(store: store, directory: directory, transport: transport, clock: clock, platform: platform),
                    transport)
        }

        func seconds(_ name: String, default value: Double) -> Duration {
            guard let raw = environment[name], let parsed = Double(raw), parsed > 0 else { return .milliseconds(Int(value * 1000)) }
            return .milliseconds(Int(parsed * 1000))
        }
    }

    static func run(_ name: String, _ arguments: [String], terminal: any Terminal, environment: [String: String],
                    clock: any WallClock) throws -> Int32 {
        var reader = ArgumentReader(arguments)
        if reader.wantsHelp, let help = helps[name] {
            terminal.out(help.rendered)
            return 0
        }
        let context = Context(terminal: terminal, environment: environment, clock: clock)
        do {
            switch name {
            case "login": return try login(&reader, context)
            case "logout": return try logout(&reader, context)
            case "whoami": return try whoami(&reader, context)
            case "approvals": return try approvals(&reader, context)
            case "approve": return try decide(.approve, &reader, context)
            case "reject": return try decide(.reject, &reader, context)
            case "checkin": return try checkIn(&reader, context)
            case "checkout": return try checkOut(&reader, context)
            case "lookup": return try lookup(&reader, context)
            case "walk-in": return try walkIn(&reader, context)
            case "stats": return try stats(&reader, context)
            case "history": return try history(&reader, context)
            case "outbox": return try outbox(&reader, context)
            default: throw UsageError("unknown subcommand \(name)")
            }
        } catch let error as ClientError {
            throw CommandFailure(sentence(for: error))
        }
    }

    /// One sentence that says what went wrong and what to do.
    static func sentence(for error: ClientError) -> String {
        switch error {
        case .unauthorized(let message): "\(message) (log in again: gatepass login --email YOU@EXAMPLE.COM)"
        case .offline(let detail): "the server is unreachable (\(detail)); try again when it is back"
        default: error.description
        }
    }

    /// `--json` output: stable (sorted keys), the same encoding the outbox stores.
    static func json<T: Encodable>(_ value: T) -> String { CanonicalJSON.string(value) }

    static func age(_ date: Date, now: Date) -> String {
        let seconds = max(0, Int(now.timeIntervalSince(date)))
        if seconds < 60 { return "\(seconds) s" }
        if seconds < 3600 { return "\(seconds / 60) min" }
        if seconds < 86_400 { return "\(seconds / 3600) h \(seconds % 3600 / 60) min" }
        return "\(seconds / 86_400) days"
    }

    static func noteIfCached<T>(_ read: ClientCore.Read<T>, _ context: Context) {
        if read.fromCache {
            context.terminal.err("offline: showing data cached \(age(read.updatedAt, now: context.clock.now())) ago")
        }
    }

    static func positional(_ reader: inout ArgumentReader, _ what: String) throws -> String {
        guard let value = reader.positional() else { throw UsageError("\(what) is required") }
        return value
    }

    // MARK: - Login, logout, whoami

    static func login(_ reader: inout ArgumentReader, _ context: Context) throws -> Int32 {
        let serverOption = try reader.option("--server")
        let email = try reader.requiredOption("--email").trimmingCharacters(in: .whitespaces).lowercased()
        let otpOption = try reader.option("--otp")
        let force = reader.flag("--force")
        let caFile = try reader.option("--ca-file")
        let asJSON = reader.flag("--json")
        try reader.finish()
        if let caFile, !FileManager.default.isReadableFile(atPath: caFile) {
            throw CommandFailure("cannot read the CA file \(caFile)")
        }
        let core = try context.core()
        let previous = try core.store.scope()
        guard let server = serverOption ?? context.environment["GATEPASS_SERVER"] ?? previous?.server else {
            throw UsageError("--server is required the first time (or set GATEPASS_SERVER)")
        }
        guard server.hasPrefix("http://") || server.hasPrefix("https://") else {
            throw UsageError("--server must be an http:// or https:// URL")
        }
        if let caFile { try core.store.setMeta("ca_file", caFile) }
        let check = try core.identityCheck(server: server, email: email)
        if check.changesIdentity && check.entriesAtRisk > 0 && !force {
            throw CommandFailure("\(check.entriesAtRisk) queued or dead-lettered entries of \(check.previous!.email) on \(check.previous!.server) would be deleted by this login; send them first (gatepass outbox drain) or use --force")
        }
        let otp: String
        if let otpOption {
            otp = otpOption
        } else {
            try core.sendCode(server: server, email: email)
            context.terminal.err(visible: "a one-time code was sent to \(email)")
            guard let typed = context.terminal.readLine(prompt: "code: ")?.trimmingCharacters(in: .whitespaces), !typed.isEmpty else {
                throw CommandFailure("no code was entered")
            }
            otp = typed
        }
        let outcome = try core.login(server: server, email: email, otp: otp, allowPurge: force)
        if asJSON {
            context.terminal.out(json(outcome.session.user))
        } else {
            var line = "logged in as \(outcome.session.user.name) <\(outcome.session.user.email)>, \(outcome.session.user.role.rawValue), on \(outcome.session.server)"
            if let scanner = outcome.session.scanner { line += "; scanning at \(scanner.checkpoint.name)" }
            context.terminal.out(visible: line)
        }
        if outcome.purgedEntries > 0 {
            context.terminal.err("deleted \(outcome.purgedEntries) queued entries of the previous user")
        }
        if let problem = outcome.deviceProblem { context.terminal.err(visible: "warning: push token not registered: \(problem)") }
        return 0
    }

    static func logout(_ reader: inout ArgumentReader, _ context: Context) throws -> Int32 {
        try reader.finish()
        let core = try context.core()
        let problems = try core.logout()
        for problem in problems { context.terminal.err(visible: "warning: \(problem)") }
        context.terminal.out("logged out")
        return 0
    }

    struct WhoAmI: Encodable {
        var user: Profile
        var server: String
        var deviceToken: String
        var checkpoint: CheckpointSummary?
        var queued: Int
        var offline: Bool
    }

    static func whoami(_ reader: inout ArgumentReader, _ context: Context) throws -> Int32 {
        let asJSON = reader.flag("--json")
        try reader.finish()
        let core = try context.core()
        let read = try core.whoami()
        let session = try core.session()!
        let answer = WhoAmI(user: read.value, server: session.server, deviceToken: try core.store.deviceToken(),
                            checkpoint: session.scanner?.checkpoint, queued: try core.store.outboxCount(), offline: read.fromCache)
        noteIfCached(read, context)
        if asJSON {
            context.terminal.out(json(answer))
        } else {
            let shown = TerminalText.visible
            context.terminal.out("""
                \(shown(answer.user.name)) <\(shown(answer.user.email))>
                role: \(answer.user.role.rawValue)\(answer.user.principalKind.mayScan ? " (may scan)" : "")
                server: \(shown(answer.server))
                checkpoint: \(shown(answer.checkpoint?.name ?? "-"))
                device token: \(shown(answer.deviceToken))
                queued entries: \(answer.queued)
                """)
        }
        return 0
    }

    // MARK: - Reads

    static func visitorLine(_ visitor: Visitor, now: Date) -> String {
        var parts = [visitor.shortId.rawValue, visitor.name]
        if let company = visitor.company { parts.append(company) }
        if let host = visitor.hostName { parts.append("host \(host)") }
        parts.append(visitor.status.rawValue)
        if visitor.status == .awaitingApproval, let requested = visitor.approvalRequestedAt {
            parts.append("waiting \(age(requested, now: now))")
        }
        return TerminalText.visible(parts.joined(separator: "  ") + "  id \(visitor.id)")
    }

    static func approvals(_ reader: inout ArgumentReader, _ context: Context) throws -> Int32 {
        let asJSON = reader.flag("--json")
        try reader.finish()
        let read = try context.core().approvals()
        noteIfCached(read, context)
        printVisitors(read.value, asJSON: asJSON, whenEmpty: "no visitors are waiting for approval", context)
        return 0
    }

    /// A page of visitors: its JSON, one line per visitor, or what an empty page means.
    static func printVisitors(_ page: Page<Visitor>, asJSON: Bool, whenEmpty: String, _ context: Context) {
        if asJSON {
            context.terminal.out(json(page))
        } else if page.items.isEmpty {
            context.terminal.out(visible: whenEmpty)
        } else {
            for visitor in page.items { context.terminal.out(visitorLine(visitor, now: context.clock.now())) }
        }
    }

    static func lookup(_ reader: inout ArgumentReader, _ context: Context) throws -> Int32 {
        let asJSON = reader.flag("--json")
        let query = try positional(&reader, "QUERY")
        try reader.finish()
        printVisitors(try context.core().lookup(query), asJSON: asJSON, whenEmpty: "no visitor matches \(query)", context)
        return 0
    }

    static func stats(_ reader: inout ArgumentReader, _ context: Context) throws -> Int32 {
        let asJSON = reader.flag("--json")
        try reader.finish()
        let read = try context.core().stats()
        noteIfCached(read, context)
        if asJSON {
            context.terminal.out(json(read.value))
        } else {
            let stats = read.value
            context.terminal.out("checked in today: \(stats.checkedInToday)\nchecked out today: \(stats.checkedOutToday)\nawaiting approval: \(stats.awaitingApproval)\nexpected today: \(stats.expectedToday)\non site: \(stats.onSite)")
        }
        return 0
    }

    static func history(_ reader: inout ArgumentReader, _ context: Context) throws -> Int32 {
        let asJSON = reader.flag("--json")
        let csv = reader.flag("--csv")
        let limit = try reader.integerOption("--limit", in: 1...500) ?? 50
        var filter = APIClient.HistoryFilter()
        if let result = try reader.option("--result") {
            guard let parsed = ScanResult(rawValue: result.uppercased()) else {
                throw UsageError("--result must be one of \(ScanResult.allCases.map(\.rawValue).joined(separator: ", "))")
            }
            filter.result = parsed
        }
        for (flag, keyPath) in [("--from", \APIClient.HistoryFilter.from), ("--to", \APIClient.HistoryFilter.to)] {
            if let text = try reader.option(flag) {
                guard let date = Timestamp.parse(text) else { throw UsageError("\(flag) must be an RFC 3339 time like 2026-11-29T16:08:43Z") }
                filter[keyPath: keyPath] = date
            }
        }
        try reader.finish()
        guard !(csv && asJSON) else { throw UsageError("choose one of --csv and --json") }
        let core = try context.core()
        if csv {
            context.terminal.out(try core.historyCSV(filter: filter), terminator: "")
            return 0
        }
        let read = try core.history(limit: limit, filter: filter)
        noteIfCached(read, context)
        if asJSON {
            context.terminal.out(json(read.value))
        } else if read.value.items.isEmpty {
            context.terminal.out("no scans")
        } else {
            for scan in read.value.items {
                context.terminal.out(visible: "\(scan.scannedAt)  \(scan.result.rawValue)  \(scan.shortId ?? "-")  \(scan.offline ? "offline " : "")raw \(scan.raw)")
            }
        }
        return 0
    }

    // MARK: - Mutations

    /// Prints a mutation's outcome; queued mutations exit 0 and say so.
    static func report<T: Decodable & Encodable>(_ outcome: ClientCore.MutationOutcome, as type: T.Type, asJSON: Bool,
                                                 _ context: Context, describe: (T) -> String) throws -> Int32 {
        switch outcome {
        case .applied(let response):
            if asJSON {
                context.terminal.out(String(decoding: response.body, as: UTF8.self))
            } else {
                let value = try APIClient.decode(T.self, from: response.body)
                context.terminal.out(visible: describe(value))
            }
            return 0
        case .queued(let entry, let reason):
            if asJSON {
                context.terminal.out(json(["queued": "true", "entry": String(entry.id), "reason": reason.description]))
            } else {
                context.terminal.out(visible: "queued as outbox entry \(entry.id): \(reason); it will be sent when the server is back (gatepass outbox drain)")
            }
            return 0
        case .refused(_, let code, let message):
            throw CommandFailure("\(code): \(message)")
        case .needsLogin(let entry, let message):
            throw CommandFailure("queued as outbox entry \(entry.id), but the server refused the session (\(message)); log in again to send it")
        }
    }

    static func decide(_ decision: ApprovalDecision, _ reader: inout ArgumentReader, _ context: Context) throws -> Int32 {
        let asJSON = reader.flag("--json")
        let note = try reader.option("--note")
        let id = try positional(&reader, "ID")
        try reader.finish()
        let outcome = try context.core().decide(decision, visitorId: id, note: note)
        return try report(outcome, as: Visitor.self, asJSON: asJSON, context) {
            "\($0.status.rawValue)  \($0.name) (\($0.shortId))"
        }
    }

    static func checkIn(_ reader: inout ArgumentReader, _ context: Context) throws -> Int32 {
        let asJSON = reader.flag("--json")
        let confirm = reader.flag("--confirm-approval")
        let code = try positional(&reader, "CODE")
        try reader.finish()
        guard code.utf8.count <= QRPayload.maximumRawBytes else {
            throw UsageError("CODE is \(code.utf8.count) bytes; a pass holds at most \(QRPayload.maximumRawBytes)")
        }
        let outcome = try context.core().checkIn(code: code, confirmApprovalRequest: confirm)
        return try report(outcome, as: CheckInAnswer.self, asJSON: asJSON, context) { answer in
            var line = "\(answer.result.rawValue)  \(answer.visitor.name) (\(answer.visitor.shortId))"
            if answer.result == .approvalRequired { line += ": run again with --confirm-approval to ask an approver" }
            return line
        }
    }

    static func checkOut(_ reader: inout ArgumentReader, _ context: Context) throws -> Int32 {
        let asJSON = reader.flag("--json")
        let code = try positional(&reader, "CODE")
        try reader.finish()
        let outcome = try context.core().checkOut(code: code)
        return try report(outcome, as: CheckOutAnswer.self, asJSON: asJSON, context) {
            "\($0.result.rawValue)  \($0.visitor.name) (\($0.visitor.shortId))"
        }
    }

    static func walkIn(_ reader: inout ArgumentReader, _ context: Context) throws -> Int32 {
        let asJSON = reader.flag("--json")
        let walkIn = ClientCore.WalkIn(name: try reader.requiredOption("--name"), phone: try reader.option("--phone"),
                                       email: try reader.option("--email"), company: try reader.option("--company"),
                                       purpose: try reader.option("--purpose"), hostName: try reader.option("--host"))
        try reader.finish()
        let outcome = try context.core().walkIn(walkIn)
        return try report(outcome, as: WalkInAnswer.self, asJSON: asJSON, context) {
            "\($0.result.rawValue)  \($0.visitor.name) (\($0.visitor.shortId)): an approver decides"
        }
    }

    // MARK: - Outbox

    /// `outbox watch`: the background drain of the console and kiosk, for a machine that
    /// only runs the scriptable commands. One line per drain that did something.
    static func watch(_ core: ClientCore, interval: TimeInterval, asJSON: Bool, _ context: Context) -> Int32 {
        let termination = TerminationSignals()
        let terminal = context.terminal
        let service = OutboxService(core: core, interval: interval) { report, online in
            guard !report.applied.isEmpty || !report.deadLettered.isEmpty || report.pausedForLogin != nil || !online else { return }
            if asJSON {
                var view = DrainView(report)
                view.offline = !online
                terminal.out(json(view))
            } else if !online {
                terminal.out("the server is unreachable; \(report.remaining) entries wait, probing /api/healthz")
            } else if let reason = report.pausedForLogin {
                terminal.out(visible: "paused: the server refused the session (\(reason)); log in again")
            } else {
                terminal.out("sent \(report.applied.count), dead-lettered \(report.deadLettered.count), \(report.remaining) left")
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

    static func outbox(_ reader: inout ArgumentReader, _ context: Context) throws -> Int32 {
        let asJSON = reader.flag("--json")
        guard let action = reader.positional() else { throw UsageError("outbox needs one of: list, dead, drain, retry ID") }
        let core = try context.core()
        let now = context.clock.now()
        switch action {
        case "list":
            try reader.finish()
            let entries = try core.store.outboxEntries()
            if asJSON { context.terminal.out(json(entries.map(EntryView.init))); return 0 }
            if entries.isEmpty { context.terminal.out("the outbox is empty"); return 0 }
            for entry in entries {
                let due = entry.nextAttemptAt > now ? "next try in \(age(now, now: entry.nextAttemptAt))" : "due now"
                context.terminal.out(visible: "\(entry.id)  \(entry.kind)  \(entry.method) \(entry.url)  attempts \(entry.attempts)  \(due)\(entry.lastError.map { "  last error: \($0)" } ?? "")")
            }
            return 0
        case "dead":
            try reader.finish()
            let dead = try core.store.deadLetters()
            if asJSON {
                context.terminal.out(json(dead.map { DeadView(entry: EntryView($0.entry), status: $0.status, errorCode: $0.errorCode,
                                                              errorMessage: $0.errorMessage, deadAt: Timestamp($0.deadAt)) }))
                return 0
            }
            if dead.isEmpty { context.terminal.out("no dead letters"); return 0 }
            for letter in dead {
                context.terminal.out(visible: "\(letter.entry.id)  \(letter.entry.kind)  \(letter.entry.method) \(letter.entry.url)  \(letter.status) \(letter.errorCode): \(letter.errorMessage)")
            }
            return 0
        case "drain":
            try reader.finish()
            let report = core.drainer.drain(ignoringBackoff: true)
            if let failure = report.failure { throw CommandFailure("the drain stopped: \(failure)") }
            if report.busy { throw CommandFailure("another process is draining this outbox; try again in a moment") }
            let view = DrainView(report)
            if asJSON {
                context.terminal.out(json(view))
            } else {
                context.terminal.out("sent \(report.applied.count), dead-lettered \(report.deadLettered.count), \(report.remaining) left")
                for entry in report.deadLettered { context.terminal.out("dead: entry \(entry.id) (\(entry.kind)); see gatepass outbox dead") }
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
            let interval = try reader.integerOption("--interval", in: 1...86_400) ?? 30
            try reader.finish()
            return watch(core, interval: TimeInterval(interval), asJSON: asJSON, context)
        case "retry":
            let text = try positional(&reader, "ID")
            try reader.finish()
            guard let id = Int64(text) else { throw UsageError("ID must be an entry number from gatepass outbox list or dead") }
            guard try core.store.retry(id: id, now: now) else { throw CommandFailure("no outbox or dead entry \(id)") }
            context.terminal.out("entry \(id) is queued and due now; run gatepass outbox drain to send it")
            return 0
        default:
            throw UsageError("outbox needs one of: list, dead, drain, retry ID")
        }
    }
}

extension Terminal {
    /// With an empty terminator, prints `text` exactly when it ends with a line feed (`out`
    /// adds one). Checked on scalars: a CSV's last "\r\n" is one Character, which
    /// `hasSuffix("\n")` does not match, and the export then gained a stray line feed.
    func out(_ text: String, terminator: String) {
        if terminator.isEmpty, text.unicodeScalars.last == "\n" { out(String(text.unicodeScalars.dropLast())) } else { out(text) }
    }
}
