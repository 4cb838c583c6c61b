import Foundation
import GatePassClient
import GatePassCore

/// The scriptable client commands (login, logout, whoami, approvals, approve, reject,
/// checkin, checkout, lookup, walk-in, stats, history, outbox): one type each, sharing
/// these helpers. Each keeps its state in the state folder (`ServerOptions.stateNote`).
enum ClientCommands {
    static let names = ["login", "logout", "whoami", "approvals", "approve", "reject", "checkin", "checkout", "lookup",
                        "walk-in", "stats", "history", "outbox"]

    typealias Context = CommandContext

    /// One sentence that says what went wrong and what to do.
    static func sentence(for error: ClientError) -> String {
        switch error {
        case .unauthorized(let message): "\(message) (log in again: gatepass login --email YOU@EXAMPLE.COM)"
        case .revoked(let message): "\(message) (ask an admin for an enrolment code, then: gatepass kiosk enrol CODE)"
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

    /// - Parameter window: the validity as the site shows it, when the line should carry it.
    static func visitorLine(_ visitor: Visitor, now: Date, window: String? = nil) -> String {
        var parts = [visitor.shortId.rawValue, visitor.name]
        if let company = visitor.company { parts.append(company) }
        if let host = visitor.hostName { parts.append("host \(host)") }
        parts.append(visitor.status.rawValue)
        if let window { parts.append("valid \(window)") }
        if visitor.status == .awaitingApproval, let requested = visitor.approvalRequestedAt {
            parts.append("waiting \(age(requested, now: now))")
        }
        return TerminalText.visible(parts.joined(separator: "  ") + "  id \(visitor.id)")
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

    /// Prints a mutation's outcome; queued mutations exit 0 and say so.
    /// - Parameter exitStatus: the status an answer exits with (0 unless it says otherwise:
    ///   3 for a refusal decided at the gate, 1 for a check-out of someone not inside).
    static func report<T: Decodable & Encodable>(_ outcome: ClientCore.MutationOutcome, as type: T.Type, asJSON: Bool,
                                                 _ context: Context, exitStatus: (T) -> Int32 = { _ in 0 },
                                                 describe: (T) -> String) throws -> Int32 {
        switch outcome {
        case .applied(let response):
            let value = try APIClient.decode(T.self, from: response.body)
            if asJSON {
                context.terminal.out(String(decoding: response.body, as: UTF8.self))
            } else {
                context.terminal.out(visible: describe(value))
            }
            return exitStatus(value)
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
}

// MARK: - Login, logout, whoami

struct LoginCommand: GatePassCommand {
    static let server = ServerOptions.server("The Gate Pass server (default $GATEPASS_SERVER, else the last one used).")
    static let email = Option<String>("--email", value: "E", required: true, help: "Your email.")
    static let otp = Option<String>("--otp", value: "CODE", help: "Verify a code already sent instead of sending one.")
    static let force = Flag("--force", help: "Log in even if another user's queued entries would be deleted.")
    static let caFile = Option<String>("--ca-file", value: "FILE",
                                       help: "Trust the CA certificates in this PEM file (kept for later commands).")
    static let configuration = CommandConfiguration(
        name: "gatepass login",
        overview: "Log in with a one-time code sent to your email. Without --otp, sends the code and asks for it. \(ServerOptions.stateNote)",
        options: [server, email, otp, force, caFile, OutputOptions.json])

    var server: String?
    var email: String
    var otp: String?
    var force: Bool
    var caFile: String?
    var json: Bool

    init(parsing arguments: ParsedArguments) throws(UsageError) {
        server = try arguments.value(Self.server)
        email = try arguments.required(Self.email).trimmingCharacters(in: .whitespaces).lowercased()
        otp = try arguments.value(Self.otp)
        force = arguments.has(Self.force)
        caFile = try arguments.value(Self.caFile)
        json = arguments.has(OutputOptions.json)
    }

    func run(_ context: CommandContext) throws -> Int32 {
        if let caFile, !FileManager.default.isReadableFile(atPath: caFile) {
            throw CommandFailure("cannot read the CA file \(caFile)")
        }
        let core = try context.core()
        let previous = try core.store.scope()
        guard let server = server ?? context.environment["GATEPASS_SERVER"] ?? previous?.server else {
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
        let code: String
        if let otp {
            code = otp
        } else {
            try core.sendCode(server: server, email: email)
            context.terminal.err(visible: "a one-time code was sent to \(email)")
            guard let typed = context.terminal.readLine(prompt: "code: ")?.trimmingCharacters(in: .whitespaces), !typed.isEmpty else {
                throw CommandFailure("no code was entered")
            }
            code = typed
        }
        let outcome = try core.login(server: server, email: email, otp: code, allowPurge: force)
        if json {
            context.terminal.out(ClientCommands.json(outcome.session.user))
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
}

struct LogoutCommand: GatePassCommand {
    static let configuration = CommandConfiguration(
        name: "gatepass logout", overview: "Unregister this device's push token, then end the session. Queued entries stay.")

    init(parsing arguments: ParsedArguments) {}

    func run(_ context: CommandContext) throws -> Int32 {
        let core = try context.core()
        let problems = try core.logout()
        for problem in problems { context.terminal.err(visible: "warning: \(problem)") }
        context.terminal.out("logged out")
        return 0
    }
}

struct WhoAmICommand: GatePassCommand {
    static let configuration = CommandConfiguration(
        name: "gatepass whoami", overview: "Show who is logged in, on which server, and the device token.",
        options: [OutputOptions.json])

    struct Answer: Encodable {
        var user: Profile
        var server: String
        var deviceToken: String
        var checkpoint: CheckpointSummary?
        var queued: Int
        var offline: Bool
    }

    var json: Bool

    init(parsing arguments: ParsedArguments) { json = arguments.has(OutputOptions.json) }

    func run(_ context: CommandContext) throws -> Int32 {
        let core = try context.core()
        let read = try core.whoami()
        let session = try core.session()!
        let answer = Answer(user: read.value, server: session.server, deviceToken: try core.store.deviceToken(),
                            checkpoint: session.scanner?.checkpoint, queued: try core.store.outboxCount(), offline: read.fromCache)
        ClientCommands.noteIfCached(read, context)
        if json {
            context.terminal.out(ClientCommands.json(answer))
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
}
