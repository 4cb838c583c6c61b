import CurlHTTP
import CursesTerminal
import Foundation
import GatePassAPI
import GatePassClient
import GatePassCommands
import GatePassConsole
import GatePassConsoleServices
import GatePassCore
import GatePassServer
import LoopbackHTTP
import Synchronization

// MARK: - The console scenario (issue: `gatepass-bench console`)
//
// Three figures, each against an anchor measured in the same run:
//   1. start -> login screen drawn: the real `gatepass console` binary in a tmux pane, polled
//      with `capture-pane`; anchors: the same procedure for `printf` in sh, and for
//      `gatepass console --help` (the same binary starting, without state or curses).
//   2. Enter on the code -> approvals list drawn, end to end in tmux (a person's wait).
//   3. In-process, split: the approvals request (`ClientCoreServices.pendingApprovals()`),
//      then from having its answer to the first paint (screen appear + render into a canvas
//      + the real `CursesTerminal.draw` on a pseudo-terminal); anchors: GET /api/healthz
//      through the same curl session, and JSONDecoder on the same response body.

/// Options of `gatepass-bench console`.
struct ConsoleBenchOptions: Sendable {
    /// Walk-ins AWAITING_APPROVAL seeded on top of the demo data.
    var pending = 10_000
    /// Repeats of the in-process request and paint measurements.
    var repeats = 30
    /// Console starts timed in tmux (each with its anchors).
    var startups = 20
    /// End-to-end logins timed in tmux (0 skips them).
    var logins = 5
    var json = false
}

/// The console scenario's options, declared once for the parser and `--help`.
enum ConsoleBenchCommandLine {
    static let pending = Option<Int>("--pending", value: "N", in: 1...200_000,
                                     help: "Walk-ins awaiting approval seeded on top of the demo data (default 10000).")
    static let repeats = Option<Int>("--repeats", value: "N", in: 1...10_000,
                                     help: "Repeats of the in-process request and paint measurements (default 30).")
    static let startups = Option<Int>("--startups", value: "N", in: 1...1000, help: "Console starts timed in tmux (default 20).")
    static let logins = Option<Int>("--logins", value: "N", in: 0...1000,
                                    help: "End-to-end logins timed in tmux (default 5; 0 skips them).")
    static let configuration = CommandConfiguration(
        name: "gatepass-bench console",
        overview: "Times the console's start, login and first paint, each against an anchor in the same run.",
        options: [pending, repeats, startups, logins, BenchCommandLine.json],
        discussion: BenchCommandLine.discussion)

    /// nil for `--help`.
    static func parse(_ arguments: [String]) throws(UsageError) -> ConsoleBenchOptions? {
        guard case .parsed(let parsed) = try CommandParser.parse(arguments, for: configuration) else { return nil }
        var options = ConsoleBenchOptions()
        options.pending = try parsed.value(pending) ?? options.pending
        options.repeats = try parsed.value(repeats) ?? options.repeats
        options.startups = try parsed.value(startups) ?? options.startups
        options.logins = try parsed.value(logins) ?? options.logins
        options.json = parsed.has(BenchCommandLine.json)
        return options
    }
}

/// `gatepass-bench console …`: its own options (the other scenarios share `Options`).
func consoleBenchMain(_ arguments: [String]) -> Int32 {
    let options: ConsoleBenchOptions
    do {
        guard let parsed = try ConsoleBenchCommandLine.parse(arguments) else {
            print(ConsoleBenchCommandLine.configuration.help)
            return 0
        }
        options = parsed
    } catch {
        return BenchCommandLine.report(error)
    }
    do {
        let report = try runConsoleScenario(options)
        if options.json {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
            print(String(decoding: try encoder.encode(report), as: UTF8.self))
        } else {
            printConsoleReport(report)
        }
        return 0
    } catch {
        progress("failed: \(error)")
        return 1
    }
}

// MARK: - Report

/// Milliseconds over repeats.
struct ConsoleTimes: Codable, Sendable {
    var count: Int
    var p50Milliseconds: Double
    var p95Milliseconds: Double
    var minMilliseconds: Double
    var maxMilliseconds: Double

    init(_ values: [Double]) {
        count = values.count
        p50Milliseconds = percentile(values, 0.5)
        p95Milliseconds = percentile(values, 0.95)
        minMilliseconds = values.min() ?? 0
        maxMilliseconds = values.max() ?? 0
    }
}

struct ConsoleStartupFigures: Codable, Sendable {
    var repeats: Int
    var paneColumns: Int
    var paneRows: Int
    var terminalType: String
    /// What one `tmux capture-pane -p` costs (the resolution of every tmux figure).
    var capturePane: ConsoleTimes
    /// `printf` in the pane's shell: the floor of the procedure.
    var shellAnchor: ConsoleTimes
    /// `gatepass console --help`: the same binary loads, parses and prints, without state or curses.
    var helpAnchor: ConsoleTimes
    /// `gatepass console --server URL` with a fresh, empty state folder, until "> Email" shows.
    var console: ConsoleTimes
    var ratioToShellAnchor: Double
    var ratioToHelpAnchor: Double
}

struct ConsoleLoginFigures: Codable, Sendable {
    var logins: Int
    var email: String
    /// From sending Enter on the typed code to the approvals title on the pane.
    var enterToList: ConsoleTimes
    /// The title line the pane showed (the count the console believes).
    var titleShown: String
}

struct ConsolePaintFigures: Codable, Sendable {
    /// Visitors handed to the screen.
    var visitorsGiven: Int
    /// The title line the screen drew.
    var titleDrawn: String
    /// The tabs built as after a login, Approvals appeared (filter + newest-first sort), one
    /// tick, the status line read: what ConsoleSession does between the answer and the paint.
    var appear: ConsoleTimes
    /// `ConsoleApp.render` into a canvas of the terminal's size.
    var render: ConsoleTimes
    /// `CursesTerminal.draw` of that canvas (diffed against the login frame drawn before), to the pty.
    var draw: ConsoleTimes
    /// appear + render + draw: from having the response to the frame written to the terminal.
    var responseToPainted: ConsoleTimes
    /// Bytes curses wrote to the terminal for the frame (median).
    var frameBytes: Int
    /// responseToPainted p50 / the decode anchor's p50.
    var ratioToDecodeAnchor: Double
    var goalMet: Bool
}

struct ConsoleApprovalsFigures: Codable, Sendable {
    var role: String
    var route: String
    /// Items in the one page the console asks for, and the page's size.
    var firstPageItems: Int
    var firstPageBytes: Int
    var hasNextPage: Bool
    /// Every AWAITING_APPROVAL visitor the role can see (all pages).
    var pendingOnServer: Int
    /// Anchor: GET /api/healthz through the same curl session.
    var healthzAnchor: ConsoleTimes
    /// The same GET the console sends, bytes only (curl, no decoding).
    var rawGet: ConsoleTimes
    /// Anchor: JSONDecoder of that body into Page<Visitor>.
    var decodeAnchor: ConsoleTimes
    /// The two steps of the offline-cache write `pendingApprovals()` makes before it answers:
    /// `CanonicalJSON.encode` of the page, and `ClientDatabase.cache` (one SQLite write, synchronous=FULL).
    var cacheEncode: ConsoleTimes
    var cacheWrite: ConsoleTimes
    /// `ClientCoreServices.pendingApprovals()`: GET + decode + cache write, as the console calls it.
    var request: ConsoleTimes
    var requestRatioToHealthz: Double
}

struct ConsoleBenchReport: Codable, Sendable {
    var cores: Int
    var pendingSeeded: Int
    var seedSeconds: Double
    var startup: ConsoleStartupFigures
    var login: ConsoleLoginFigures?
    var approvals: ConsoleApprovalsFigures
    /// What the console does: the first page only.
    var paintFirstPage: ConsolePaintFigures
    /// Every pending visitor loaded into the screen (through a services object answering all pages).
    var paintAllPending: ConsolePaintFigures
    var canvasColumns: Int
    var canvasRows: Int
    var goalMilliseconds: Double
}

func printConsoleReport(_ report: ConsoleBenchReport) {
    func row(_ label: String, _ times: ConsoleTimes, _ extra: String = "") -> String {
        label.padding(toLength: 46, withPad: " ", startingAt: 0)
            + format(times.p50Milliseconds, 2).leftPadded(9) + format(times.p95Milliseconds, 2).leftPadded(9)
            + format(times.minMilliseconds, 2).leftPadded(9) + format(times.maxMilliseconds, 2).leftPadded(9)
            + (extra.isEmpty ? "" : "   " + extra)
    }
    let header = "".padding(toLength: 46, withPad: " ", startingAt: 0)
        + "p50 ms".leftPadded(9) + "p95 ms".leftPadded(9) + "min ms".leftPadded(9) + "max ms".leftPadded(9)
    let s = report.startup
    var out = """
        gatepass-bench console: \(report.cores) cores; in-process server (dev mode, loopback) with \(report.approvals.pendingOnServer) \
        visitors AWAITING_APPROVAL (\(report.pendingSeeded) walk-ins seeded in \(format(report.seedSeconds, 1)) s + the demo data)

        1. start -> login screen drawn: the real `gatepass console` in a tmux pane \(s.paneColumns)x\(s.paneRows) (TERM=\(s.terminalType)),
           fresh empty state folder each start; pane polled with capture-pane (one poll: p50 \(format(s.capturePane.p50Milliseconds, 2)) ms)
        \(header)
        \(row("anchor: printf in sh", s.shellAnchor))
        \(row("anchor: gatepass console --help", s.helpAnchor))
        \(row("gatepass console until \"> Email\" shows", s.console, "ratio \(format(s.ratioToShellAnchor, 2)) to sh, \(format(s.ratioToHelpAnchor, 2)) to --help"))


        """
    if let login = report.login {
        out += """
            2. end to end in tmux: Enter on the code -> approvals drawn (\(login.email), \(login.logins) logins)
            \(header)
            \(row("Enter -> \"Awaiting approval (\" shows", login.enterToList))
               the pane showed: \(login.titleShown)


            """
    }
    let a = report.approvals
    out += """
        3. in-process (\(a.role)): the console's request \(a.route)
           one page: \(a.firstPageItems) visitors, \(format(Double(a.firstPageBytes) / 1024, 1)) KiB\(a.hasNextPage ? ", more pages exist (the console does not read them)" : "")
        \(header)
        \(row("anchor: GET /api/healthz (curl)", a.healthzAnchor))
        \(row("same GET, bytes only (curl)", a.rawGet))
        \(row("anchor: JSONDecoder of that body", a.decodeAnchor))
        \(row("CanonicalJSON.encode of the page (cache)", a.cacheEncode))
        \(row("ClientDatabase.cache write (cache)", a.cacheWrite))
        \(row("pendingApprovals(): GET+decode+cache write", a.request, "ratio \(format(a.requestRatioToHealthz, 2)) to healthz"))


        """
    for (title, paint) in [("the console's first page", report.paintFirstPage), ("all pending loaded", report.paintAllPending)] {
        out += """
               response -> painted, \(title): \(paint.visitorsGiven) visitors, canvas \(report.canvasColumns)x\(report.canvasRows), \
            \(paint.frameBytes) bytes to the terminal; drew "\(paint.titleDrawn)"
            \(row("  tabs, appear (filter, sort), tick, status", paint.appear))
            \(row("  render into the canvas", paint.render))
            \(row("  CursesTerminal.draw to the pty", paint.draw))
            \(row("  response -> painted", paint.responseToPainted, "ratio \(format(paint.ratioToDecodeAnchor, 2)) to decode; goal p95 < \(format(report.goalMilliseconds, 0)) ms: \(paint.goalMet ? "met" : "NOT met")"))

            """
    }
    print(out, terminator: "")
}

// MARK: - The scenario

/// Adds `count` walk-ins AWAITING_APPROVAL to the demo organization, spread over the last
/// four hours, from 16 threads (the server's writer commits them in groups).
func seedPendingWalkIns(_ server: GatePassServer, count: Int) throws {
    final class Next: Sendable { let value = Atomic<Int>(0) }
    let next = Next()
    let failure = Locked<String?>(nil)
    let now = Date()
    try runThreads(16, limit: 900) { _ in
        while true {
            let n = next.value.wrappingAdd(1, ordering: .relaxed).oldValue
            if n >= count || failure.withLock({ $0 != nil }) { break }
            let at = now.addingTimeInterval(-4 * 3600 * Double(count - n) / Double(count))
            do {
                if try DemoData.addArrival(to: server, number: n, now: at, timeZone: .current) == nil {
                    failure.withLock { $0 = "DemoData.addArrival found no demo organization" }
                }
            } catch {
                failure.withLock { $0 = "DemoData.addArrival failed: \(error)" }
            }
        }
    }
    if let failure = failure.withLock({ $0 }) { throw BenchFailure(failure) }
}

func peekCode(email: String, port: UInt16) throws -> String {
    let answer = try LoopbackHTTPClient(host: "127.0.0.1", port: port, timeoutSeconds: 10).get(Endpoint.authDevPeekOTP.path(query: [("email", email)]))
    guard let otp = answer.json?["otp"] as? String else { throw BenchFailure("dev-peek-otp gave no code for \(email): \(answer.text)") }
    return otp
}

func runConsoleScenario(_ options: ConsoleBenchOptions) throws -> ConsoleBenchReport {
    let gatepass = try consoleExecutable()
    let tmuxPath = try tmuxExecutable()
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("gatepass-bench-console-\(UUID().uuidString)").path
    try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: directory) }

    var configuration = ServerConfiguration()
    // It seeds and scans at machine speed with one user and one scanner token, far beyond the
    // per-principal limits meant for people and gates (tested apart in RateLimitTests).
    configuration.limits.enabled = false
    configuration.host = "127.0.0.1"
    configuration.port = 0
    configuration.database = directory + "/server.db"
    configuration.otpResendIntervalSeconds = 0
    configuration.otpSendsPerHour = 10_000
    let server = try GatePassServer(configuration: configuration, devMode: true, logSink: SilentLog())
    defer { server.stop(grace: .seconds(2)) }
    let baseURL = "http://127.0.0.1:\(server.port)"
    try DemoData.seed(store: server.store, now: Date(), timeZone: .current)
    progress("server on \(baseURL); seeding \(options.pending) walk-ins awaiting approval")
    let seedStart = monotonicNanoseconds()
    try seedPendingWalkIns(server, count: options.pending)
    let seedSeconds = Double(monotonicNanoseconds() - seedStart) / 1e9
    progress("seeded in \(format(seedSeconds, 1)) s")

    let ownerEmail = "owner@demo.gatepass"
    let tmux = ConsoleTmux(executable: tmuxPath)
    let paneColumns = 100, paneRows = 30
    try tmux.start(columns: paneColumns, rows: paneRows)
    defer { tmux.kill() }
    let terminalType = (try? tmux.run(["show-options", "-gv", "default-terminal"]))?
        .trimmingCharacters(in: .whitespacesAndNewlines) ?? ""
    let paneTerminal = terminalType.isEmpty ? "screen" : terminalType

    // 1. Start -> login screen drawn, interleaved with its anchors.
    var pollCosts: [Double] = []
    var shellTimes: [Double] = [], helpTimes: [Double] = [], consoleTimes: [Double] = []
    let loginMarker = "> Email"
    progress("timing \(options.startups) console starts in tmux (\(paneColumns)x\(paneRows), TERM=\(paneTerminal)) with their anchors")
    for index in 0..<options.startups {
        let state = directory + "/start-\(index)"
        // The order turns each round, so no kind always runs right after another (page cache, CPU clock).
        for kind in (0..<3).map({ ($0 + index) % 3 }) {
            switch kind {
            case 0:
                shellTimes.append(try tmux.timeUntilShown("BENCH-READY", command: "printf 'BENCH-READY'; exec sleep 600",
                                                          pollCosts: &pollCosts))
            case 1:
                helpTimes.append(try tmux.timeUntilShown("USAGE: gatepass console",
                                                         command: "\(shellQuoted(gatepass)) console --help; exec sleep 600",
                                                         pollCosts: &pollCosts))
            default:
                consoleTimes.append(try tmux.timeUntilShown(
                    loginMarker,
                    command: "GATEPASS_STATE_DIR=\(shellQuoted(state)) exec \(shellQuoted(gatepass)) console --server \(baseURL)",
                    pollCosts: &pollCosts))
            }
        }
    }
    try tmux.reset(awayFrom: loginMarker)
    let startup = ConsoleStartupFigures(
        repeats: options.startups, paneColumns: paneColumns, paneRows: paneRows, terminalType: paneTerminal,
        capturePane: ConsoleTimes(pollCosts), shellAnchor: ConsoleTimes(shellTimes), helpAnchor: ConsoleTimes(helpTimes),
        console: ConsoleTimes(consoleTimes),
        ratioToShellAnchor: percentile(consoleTimes, 0.5) / max(percentile(shellTimes, 0.5), 0.001),
        ratioToHelpAnchor: percentile(consoleTimes, 0.5) / max(percentile(helpTimes, 0.5), 0.001))
    progress("start -> login screen: p50 \(format(startup.console.p50Milliseconds, 1)) ms (sh \(format(startup.shellAnchor.p50Milliseconds, 1)) ms, --help \(format(startup.helpAnchor.p50Milliseconds, 1)) ms)")

    // 2. End to end: log in in the pane, time Enter on the code -> the list drawn.
    var login: ConsoleLoginFigures?
    if options.logins > 0 {
        progress("timing \(options.logins) logins end to end in tmux as \(ownerEmail)")
        var enterTimes: [Double] = []
        var title = ""
        var ignored: [Double] = []
        for index in 0..<options.logins {
            let state = directory + "/login-\(index)"
            try tmux.reset(awayFrom: "Awaiting approval (")
            try tmux.respawn("GATEPASS_STATE_DIR=\(shellQuoted(state)) exec \(shellQuoted(gatepass)) console --server \(baseURL)")
            guard try tmux.waitFor(loginMarker, timeout: 20, pollCosts: &ignored) != nil else {
                throw BenchFailure("the console's login screen did not show")
            }
            try tmux.literal(ownerEmail)
            try tmux.keys("Enter")
            guard try tmux.waitFor("A 6-digit code was sent", timeout: 20, pollCosts: &ignored) != nil else {
                throw BenchFailure("the console did not say the code was sent:\n\((try? tmux.screen()) ?? "")")
            }
            let code = try peekCode(email: ownerEmail, port: server.port)
            try tmux.literal(code)
            guard try tmux.waitFor(code, timeout: 20, pollCosts: &ignored) != nil else {
                throw BenchFailure("the typed code did not show")
            }
            let start = monotonicNanoseconds()
            try tmux.keys("Enter")
            guard let seen = try tmux.waitFor("Awaiting approval (", timeout: 30, pollCosts: &ignored) else {
                throw BenchFailure("the approvals list did not show after the login:\n\((try? tmux.screen()) ?? "")")
            }
            enterTimes.append(Double(seen.at - start) / 1e6)
            title = seen.screen.split(separator: "\n").first { $0.contains("Awaiting approval (") }
                .map { $0.trimmingCharacters(in: .whitespaces) } ?? ""
        }
        try tmux.reset(awayFrom: "Awaiting approval (")
        login = ConsoleLoginFigures(logins: options.logins, email: ownerEmail, enterToList: ConsoleTimes(enterTimes), titleShown: title)
        progress("Enter -> approvals drawn: p50 \(format(login!.enterToList.p50Milliseconds, 1)) ms; the pane showed \"\(title)\"")
    }
    tmux.kill()

    // 3. In-process: the request, then response -> painted.
    progress("logging a client core in as \(ownerEmail) for the in-process figures")
    let transport = CurlSession(options: .init())
    let core = try ClientCore(directory: StateDirectory(path: directory + "/client"), transport: transport, platform: "console")
    let services = ClientCoreServices(core: core, transport: transport, defaultServer: baseURL)
    try services.sendCode(server: baseURL, email: ownerEmail)
    let user = try services.logIn(server: baseURL, email: ownerEmail, code: try peekCode(email: ownerEmail, port: server.port),
                                  allowPurge: false)
    guard let session = try core.session() else { throw BenchFailure("the client core has no session after logging in") }
    let api = APIClient(baseURL: baseURL, transport: transport)
    // What ClientCore.approvals() asks for an OWNER or ADMIN (an APPROVER gets /api/approver/visitors).
    let route = "\(Endpoint.visitorsList.method.rawValue) \(Endpoint.visitorsList.path(query: [("status", "AWAITING_APPROVAL"), ("limit", "500")]))"
    guard user.role.managesOrganization else { throw BenchFailure("\(ownerEmail) should be an OWNER") }
    let rawRequest = CurlRequest(method: Endpoint.visitorsList.method.rawValue, url: baseURL + Endpoint.visitorsList.path(query: [("status", "AWAITING_APPROVAL"), ("limit", "500")]),
                                 headers: [("Accept", "application/json"), ("Authorization", "Bearer \(session.token)")])
    let firstBody = try transport.perform(rawRequest)
    guard firstBody.status == 200 else { throw BenchFailure("\(route) answered \(firstBody.status)") }
    let firstPage = try JSONDecoder().decode(Page<Visitor>.self, from: Data(firstBody.body))
    var everyone: [Visitor] = []
    var cursor: String?
    repeat {
        let page = try api.visitors(token: session.token, status: .awaitingApproval, limit: 500, cursor: cursor)
        everyone += page.items
        cursor = page.nextCursor
    } while cursor != nil
    progress("\(everyone.count) visitors awaiting approval on the server; the console's page holds \(firstPage.items.count)")
    let allRead = ConsoleRead(value: everyone, updatedAt: Date(), fromCache: false)

    let canvasColumns = 200, canvasRows = 60
    let pty = try ConsolePseudoTerminal(columns: canvasColumns, rows: canvasRows)
    pty.startDraining()
    defer { pty.close() }

    var healthz: [Double] = [], rawGet: [Double] = [], decode: [Double] = [], request: [Double] = []
    var cacheEncode: [Double] = [], cacheWrite: [Double] = []
    struct PaintSamples {
        var appear: [Double] = [], render: [Double] = [], draw: [Double] = [], total: [Double] = [], bytes: [Double] = []
        var title = ""
        var given = 0
    }
    var first = PaintSamples(), all = PaintSamples()
    var drawnSize = (width: 0, height: 0)
    progress("timing \(options.repeats) requests and paints (canvas \(canvasColumns)x\(canvasRows), real curses driver on \(pty.slavePath), TERM=\(paneTerminal))")
    try withCursesOnPseudoTerminal(pty, terminalType: paneTerminal) { terminal in
        drawnSize = terminal.size()
        func status() -> ConsoleApp.Status {
            // What ConsoleSession.refreshStatus reads before a paint.
            let current = services.currentUser()
            return ConsoleApp.Status(who: current.map { "\($0.name) <\($0.email)>" } ?? "not logged in",
                                     role: current?.role.rawValue ?? "", server: current?.server ?? services.serverURL(),
                                     queued: (try? core.store.outboxCount()) ?? 0)
        }
        /// The tabs ConsoleSession.tabs() builds after a login (its background threads aside:
        /// they start before the request); only the Approvals tab appears.
        func tabs(approvals: ConsolePrefetchedServices) -> [any ConsoleScreen] {
            let now: () -> Date = { Date() }
            var tabs: [any ConsoleScreen] = []
            if user.role != .platformAdmin { tabs.append(ApprovalsScreen(services: approvals, clock: now)) }
            if user.mayScan { tabs.append(ScanScreen(services: services, clock: now, sourceDescription: nil, siteClock: SiteClock(timeZone: .current))) }
            if user.role.managesOrganization {
                tabs.append(HistoryScreen(services: services, clock: now, timeZone: .current, homeDirectory: directory))
            }
            tabs.append(MoreScreen(services: services, clock: now, connection: ConsoleConnection(start: Date())))
            return tabs
        }
        func paint(_ read: ConsoleRead<[Visitor]>, into samples: inout PaintSamples) {
            // The frame before: the login screen, as in the console right after Enter on the code.
            let loginApp = ConsoleApp(factory: .init(tabs: { [LoginScreen(services: services, email: user.email)] },
                                                     visitorDetail: { _ in preconditionFailure("the bench opens no visitor") }))
            terminal.draw(loginApp.render(width: drawnSize.width, height: drawnSize.height))
            let before = pty.settledByteCount()

            let start = monotonicNanoseconds()
            let listed = ConsolePrefetchedServices(base: services, approvals: read)
            let app = ConsoleApp(factory: .init(tabs: { tabs(approvals: listed) },
                                                visitorDetail: { _ in preconditionFailure("the bench opens no visitor") }))
            _ = app.tick(now: Date())
            app.status = status()
            let appeared = monotonicNanoseconds()
            let size = terminal.size()
            let canvas = app.render(width: size.width, height: size.height)
            let rendered = monotonicNanoseconds()
            terminal.draw(canvas)
            let drawn = monotonicNanoseconds()

            samples.bytes.append(Double(pty.settledByteCount() - before))
            samples.appear.append(Double(appeared - start) / 1e6)
            samples.render.append(Double(rendered - appeared) / 1e6)
            samples.draw.append(Double(drawn - rendered) / 1e6)
            samples.total.append(Double(drawn - start) / 1e6)
            samples.given = read.value.count
            samples.title = (0..<canvas.height).map(canvas.line).first { $0.contains("Awaiting approval (") } ?? "(no title drawn)"
        }
        for _ in 0..<options.repeats {
            var start = monotonicNanoseconds()
            _ = try api.send(.healthz)
            healthz.append(Double(monotonicNanoseconds() - start) / 1e6)

            start = monotonicNanoseconds()
            let raw = try transport.perform(rawRequest)
            rawGet.append(Double(monotonicNanoseconds() - start) / 1e6)
            guard raw.status == 200 else { throw BenchFailure("\(route) answered \(raw.status)") }

            start = monotonicNanoseconds()
            let decoded = try JSONDecoder().decode(Page<Visitor>.self, from: Data(raw.body))
            decode.append(Double(monotonicNanoseconds() - start) / 1e6)
            precondition(decoded.items.count == firstPage.items.count)

            start = monotonicNanoseconds()
            let encoded = CanonicalJSON.encode(decoded)
            cacheEncode.append(Double(monotonicNanoseconds() - start) / 1e6)
            start = monotonicNanoseconds()
            try core.store.cache("approvals", value: encoded, at: Date())
            cacheWrite.append(Double(monotonicNanoseconds() - start) / 1e6)

            start = monotonicNanoseconds()
            let read = try services.pendingApprovals()
            request.append(Double(monotonicNanoseconds() - start) / 1e6)
            guard !read.fromCache else { throw BenchFailure("pendingApprovals() answered from the cache") }

            paint(read, into: &first)
            paint(allRead, into: &all)
        }
    }
    guard drawnSize.width == canvasColumns, drawnSize.height == canvasRows else {
        throw BenchFailure("curses saw a \(drawnSize.width)x\(drawnSize.height) terminal instead of \(canvasColumns)x\(canvasRows) (are LINES or COLUMNS set?)")
    }

    let goal = 100.0
    func figures(_ samples: PaintSamples) -> ConsolePaintFigures {
        let total = ConsoleTimes(samples.total)
        return ConsolePaintFigures(
            visitorsGiven: samples.given, titleDrawn: samples.title, appear: ConsoleTimes(samples.appear),
            render: ConsoleTimes(samples.render), draw: ConsoleTimes(samples.draw), responseToPainted: total,
            frameBytes: Int(percentile(samples.bytes, 0.5)),
            ratioToDecodeAnchor: total.p50Milliseconds / max(percentile(decode, 0.5), 0.001),
            goalMet: total.p95Milliseconds < goal)
    }
    let approvals = ConsoleApprovalsFigures(
        role: user.role.rawValue, route: route, firstPageItems: firstPage.items.count, firstPageBytes: firstBody.body.count,
        hasNextPage: firstPage.nextCursor != nil, pendingOnServer: everyone.count, healthzAnchor: ConsoleTimes(healthz),
        rawGet: ConsoleTimes(rawGet), decodeAnchor: ConsoleTimes(decode),
        cacheEncode: ConsoleTimes(cacheEncode), cacheWrite: ConsoleTimes(cacheWrite), request: ConsoleTimes(request),
        requestRatioToHealthz: percentile(request, 0.5) / max(percentile(healthz, 0.5), 0.001))
    return ConsoleBenchReport(
        cores: ProcessInfo.processInfo.activeProcessorCount, pendingSeeded: options.pending, seedSeconds: seedSeconds,
        startup: startup, login: login, approvals: approvals, paintFirstPage: figures(first), paintAllPending: figures(all),
        canvasColumns: canvasColumns, canvasRows: canvasRows, goalMilliseconds: goal)
}
