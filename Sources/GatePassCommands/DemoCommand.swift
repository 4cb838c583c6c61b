import CurlHTTP
import Foundation
import GatePassClient
import GatePassConsole
import GatePassCore
import GatePassScanner
import GatePassServer
import QRCode

/// `gatepass demo`: the first thing a new user runs. One process holds everything: the API
/// server (in development mode, on loopback, with the demo organization), a walk-in arriving
/// every half minute so the live approvals queue moves, the demo passes as PNG files, and the
/// console logged in against it. When the console quits, the server stops and — unless
/// `--dir` was given — the folder is removed, so nothing is left running or lying around.
struct DemoCommand: GatePassCommand {
    static let directory = Option<String>(
        "--dir", value: "DIR",
        help: "Keep the demo's database, passes, server log and console state in DIR (kept after quitting; a second run goes on with the same data). Default: a private temporary folder, removed when the console quits.")
    static let port = Option<Int>("--port", value: "N", in: 0...65_535, help: "The server's port (default 0: a free one).")
    static let arrivals = Option<Int>("--arrivals", value: "SECONDS", in: 0...86_400,
                                      help: "How often a new walk-in arrives and waits for approval (default 30; 0 for none).")
    static let configuration = CommandConfiguration(
        name: "gatepass demo",
        overview: "Try Gate Pass in one command: starts a development server on loopback with a demo organization (a user per role, visitors in every status, a new walk-in waiting for approval every 30 s), writes demo passes as PNG files, and opens the console against it with the demo logins listed and the one-time code filled in. Quitting the console stops everything.",
        options: [directory, port, arrivals])

    var keptFolder: String?
    var port: Int
    var arrivalSeconds: Int

    init(parsing arguments: ParsedArguments) throws(UsageError) {
        keptFolder = try arguments.value(Self.directory)
        port = try arguments.value(Self.port) ?? 0
        arrivalSeconds = try arguments.value(Self.arrivals) ?? 30
    }

    func run(_ context: CommandContext) throws -> Int32 {
        let (terminal, environment, clock) = (context.terminal, context.environment, context.clock)
        // The console needs a terminal; say so before starting anything.
        guard isatty(STDOUT_FILENO) == 1, isatty(STDIN_FILENO) == 1 else {
            throw CommandFailure("gatepass demo opens the full-screen console, which needs a terminal. Without one, run the server alone: gatepass serve --dev --demo-data --port 8080 (it prints how to log in with curl).")
        }

        let folder = try DemoFolder(kept: keptFolder)
        defer { folder.removeIfTemporary() }
        let configuration = Self.serverConfiguration(folder: folder.path, port: port)
        signal(SIGPIPE, SIG_IGN)
        raiseOpenFileLimit()
        let server: GatePassServer
        do {
            // One log line per request would scroll over the console: the log goes to a file.
            server = try GatePassServer(configuration: configuration, devMode: true, clock: clock,
                                        logSink: try FileLog(path: folder.path + "/server.log"))
        } catch {
            throw CommandFailure("cannot start the demo server: \(error)")
        }
        defer { server.stop() }
        let timeZone = configuration.resolvedTimeZone
        let seeded = try DemoData.seed(store: server.store, now: clock.now(), timeZone: timeZone)
        let upcoming = seeded.isEmpty ? [] : try DemoData.seedUpcoming(server: server, now: clock.now(), timeZone: timeZone)
        // The invitations are written before the summary names them.
        server.deliverDueMail()
        let passes = try Self.writePasses(seeded, server: server, into: folder.path + "/passes")
        let invitations = Self.invitationFiles(in: configuration.mailDirectory!, upcoming: upcoming)
        let arrivals = DemoArrivals(server: server, every: arrivalSeconds, clock: clock, timeZone: timeZone)
        arrivals.start()
        defer { arrivals.stop() }

        terminal.out(Self.summary(server: server.baseURL, folder: folder, passes: passes, invitations: invitations,
                                  arrivalSeconds: arrivalSeconds))
        var consoleEnvironment = environment
        consoleEnvironment["GATEPASS_STATE_DIR"] = folder.path + "/console"
        let baseURL = server.baseURL
        let hints = LoginScreen.DemoHints(
            logins: DemoData.logins.map { ($0.email, $0.role.rawValue + ($0.canScan ? ", can scan" : "")) },
            devCode: { server, email in
                // The console's own server field may have been edited: ask the server it names.
                try? APIClient(baseURL: server.isEmpty ? baseURL : server, transport: CurlSession()).devPeekOTP(email: email)
            })
        let status = try ConsoleCommand.runConsole(.init(server: baseURL, demo: hints), terminal: terminal,
                                                   environment: consoleEnvironment, clock: clock)
        arrivals.stop()
        server.stop()
        terminal.out(folder.isTemporary
                     ? "demo stopped; its folder \(folder.path) was removed"
                     : "demo stopped; its data stays in \(folder.path) (run gatepass demo --dir \(folder.path) to go on)")
        return status
    }

    /// The demo server's configuration: on loopback, its database and mail in `folder`.
    static func serverConfiguration(folder: String, port: Int) -> ServerConfiguration {
        var configuration = ServerConfiguration()
        configuration.database = folder + "/server.db"
        configuration.host = "127.0.0.1"
        configuration.port = port
        // The demo logs in as one role after another, and out and in again at once: neither the
        // 30 s between codes nor an hour's five codes per address may stand in the way. The
        // other OTP rules (10 minutes, 5 tries) stay.
        configuration.otpResendIntervalSeconds = 0
        configuration.otpSendsPerHour = 1_000
        configuration.mailDirectory = folder + "/mail"
        return configuration
    }

    /// What the person reads before the console takes the screen (and finds in the
    /// scrollback after quitting).
    static func summary(server: String, folder: DemoFolder, passes: [(label: String, path: String)],
                        invitations: [(label: String, path: String)] = [], arrivalSeconds: Int) -> String {
        var lines = ["Gate Pass demo: server \(server) (development mode: one-time codes are shown)",
                     "demo organization \"\(DemoData.organization)\"; log in as:"]
        for login in DemoData.logins {
            lines.append("  \(login.email)  \(login.role.rawValue)\(login.canScan ? " (can scan)" : "")")
        }
        lines.append("demo passes (open them, or scan them: gatepass scan --image FILE):")
        for pass in passes { lines.append("  \(pass.label): \(pass.path)") }
        if !invitations.isEmpty {
            lines.append("invitations mailed to upcoming visitors (development mode writes mail as .eml files):")
            for invitation in invitations { lines.append("  \(invitation.label): \(invitation.path)") }
        }
        lines.append("all mail (login codes, invitations, arrival notices): \(folder.path)/mail")
        lines.append(arrivalSeconds > 0 ? "a new walk-in waits for approval every \(arrivalSeconds) s" : "no walk-ins arrive by themselves")
        lines.append("server log: \(folder.path)/server.log")
        lines.append(folder.isTemporary ? "everything is removed when the console quits (q)" : "data kept in \(folder.path)")
        return lines.joined(separator: "\n")
    }

    /// The `.eml` file of each upcoming visitor's invitation (named `invitation-<email>-…`).
    static func invitationFiles(in folder: String, upcoming: [(name: String, shortId: String)]) -> [(label: String, path: String)] {
        let files = ((try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []).filter {
            $0.hasPrefix("invitation-") && $0.hasSuffix(".eml")
        }.sorted()
        return upcoming.compactMap { person in
            let address = person.name.lowercased().replacingOccurrences(of: " ", with: ".") + "@example.com"
            guard let file = files.first(where: { $0.hasPrefix("invitation-\(address)-") }) else { return nil }
            return ("\(person.name) \(person.shortId)", folder + "/" + file)
        }
    }

    /// One PNG per seeded pass (the printable pass, as `pass.png` draws it), named by what it
    /// shows at the gate (`EXPECTED-7K3M…png`).
    static func writePasses(_ seeded: [String: String], server: GatePassServer,
                            into directory: String) throws -> [(label: String, path: String)] {
        guard !seeded.isEmpty else {
            // The organization existed already (--dir reused): its passes were written then.
            let existing = (try? FileManager.default.contentsOfDirectory(atPath: directory))?.filter { $0.hasSuffix(".png") }.sorted() ?? []
            return existing.map { (String($0.dropLast(4)), directory + "/" + $0) }
        }
        do {
            try StateDirectory(path: directory).prepare()
        } catch {
            throw CommandFailure("\(error)")
        }
        var written: [(label: String, path: String)] = []
        for (label, shortId) in seeded.sorted(by: { $0.key < $1.key }) {
            let path = "\(directory)/\(label)-\(shortId).png"
            do {
                guard let id = ShortID(shortId) else { throw CommandFailure("the demo seed made the short id \(shortId)") }
                try Data(try server.passPNG(shortId: id)).write(to: URL(fileURLWithPath: path))
            } catch {
                throw CommandFailure("cannot write the demo pass \(path): \(error)")
            }
            written.append(("\(label) \(shortId)", path))
        }
        return written
    }
}

/// The demo's folder: the one named by `--dir`, or a private temporary one named after this
/// process, removed at the end. Temporary folders of demos that died without cleaning up
/// (killed by a signal) are removed at the next start, once their process is gone.
struct DemoFolder {
    let path: String
    let isTemporary: Bool
    static let temporaryPrefix = "gatepass-demo-"

    init(kept: String?) throws {
        if let kept {
            path = kept
            isTemporary = false
        } else {
            let base = FileManager.default.temporaryDirectory.path
            Self.removeAbandoned(in: base)
            path = "\(base)/\(Self.temporaryPrefix)\(getpid())"
            isTemporary = true
            try? FileManager.default.removeItem(atPath: path)
        }
        // The database and its secret live here: only the owner may enter (0700).
        do {
            try StateDirectory(path: path).prepare()
        } catch {
            throw CommandFailure("\(error)")
        }
    }

    func removeIfTemporary() {
        if isTemporary { try? FileManager.default.removeItem(atPath: path) }
    }

    /// Removes `gatepass-demo-<pid>` folders whose process no longer exists.
    static func removeAbandoned(in base: String) {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: base) else { return }
        for name in names where name.hasPrefix(temporaryPrefix) {
            guard let pid = Int32(name.dropFirst(temporaryPrefix.count)), pid > 0 else { continue }
            // kill(pid, 0) fails with ESRCH only when no such process exists.
            if kill(pid, 0) != 0 && errno == ESRCH { try? FileManager.default.removeItem(atPath: base + "/" + name) }
        }
    }
}

/// A walk-in every `every` seconds (through `DemoData.addArrival`, so its event reaches the
/// consoles like a real one), on a timer until stopped.
final class DemoArrivals: @unchecked Sendable {
    private let server: GatePassServer
    private let every: Int
    private let clock: any WallClock
    private let timeZone: TimeZone
    /// `Locked` holds Sendable values; a dispatch source is thread-safe but not marked so.
    private struct Timer: @unchecked Sendable { let source: any DispatchSourceTimer }
    private let timer = Locked<Timer?>(nil)
    private let count = Locked(0)

    init(server: GatePassServer, every: Int, clock: any WallClock, timeZone: TimeZone) {
        self.server = server; self.every = every; self.clock = clock; self.timeZone = timeZone
    }

    func start() {
        guard every > 0 else { return }
        let source = DispatchSource.makeTimerSource(queue: DispatchQueue(label: "gatepass.demo.arrivals"))
        source.schedule(deadline: .now() + .seconds(every), repeating: .seconds(every))
        source.setEventHandler { [self] in
            let number = count.withLock { value -> Int in value += 1; return value }
            // A failed insert (the database closing at quit) only skips this arrival.
            _ = try? DemoData.addArrival(to: server, number: number, now: clock.now(), timeZone: timeZone)
        }
        source.resume()
        timer.withLock { $0 = Timer(source: source) }
    }

    /// Cancels the timer; an arrival being written finishes first (cancel waits for nothing,
    /// but the server's stop commits queued writes before closing).
    func stop() {
        timer.withLock { timer in
            timer?.source.cancel()
            timer = nil
        }
    }
}
