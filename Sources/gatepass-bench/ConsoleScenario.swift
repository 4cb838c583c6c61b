import CurlHTTP
import CursesTerminal
import Foundation
import GatePassAPI
import GatePassClient
import GatePassConsole
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

func parseConsoleOptions(_ arguments: [String]) throws(UsageError) -> ConsoleBenchOptions {
    var options = ConsoleBenchOptions()
    var rest = arguments[...]
    func integer(_ flag: String, _ range: ClosedRange<Int>) throws(UsageError) -> Int {
        guard let text = rest.popFirst() else { throw .bad("\(flag) needs a value") }
        guard let number = Int(text), range.contains(number) else {
            throw .bad("\(flag) must be an integer from \(range.lowerBound) to \(range.upperBound), not \(text)")
        }
        return number
    }
    while let flag = rest.popFirst() {
        switch flag {
        case "--pending": options.pending = try integer(flag, 1...200_000)
        case "--repeats": options.repeats = try integer(flag, 1...10_000)
        case "--startups": options.startups = try integer(flag, 1...1000)
        case "--logins": options.logins = try integer(flag, 0...1000)
        case "--json": options.json = true
        case "--help", "-h": throw .help
        default: throw .bad("unknown option \(flag) for the console scenario")
        }
    }
    return options
}

/// `gatepass-bench console …`: parses its own options (the other scenarios share `Options`).
func consoleBenchMain(_ arguments: [String]) -> Int32 {
    let options: ConsoleBenchOptions
    do {
        options = try parseConsoleOptions(arguments)
    } catch {
        switch error {
        case .help:
            print(usageText)
            return 0
        case .bad(let message):
            FileHandle.standardError.write(Data(("gatepass-bench: \(message)\n\n" + usageText + "\n").utf8))
            return 2
        }
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

// MARK: - Running programs without Foundation's Process

/// Runs `arguments` (the first is an absolute path) with `posix_spawn`, standard input and
/// error on /dev/null, and answers what it printed.
///
/// Not `Process`: the first tmux command forks the tmux server, which would inherit the
/// descriptor Foundation watches for the child's exit (see ConsoleTmuxTests). Every other
/// descriptor is closed in the child (`posix_spawn_file_actions_addclosefrom_np`).
func consoleSpawn(_ arguments: [String], capture: Bool = true) throws -> String {
    var pipeEnds: [Int32] = [-1, -1]
    if capture {
        guard pipe(&pipeEnds) == 0 else { throw BenchFailure("pipe failed: errno \(errno)") }
        for end in pipeEnds { _ = fcntl(end, F_SETFD, FD_CLOEXEC) }
    }
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
    if capture {
        posix_spawn_file_actions_adddup2(&actions, pipeEnds[1], 1)
    } else {
        posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
    }
    posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
    if let closeFrom = ConsoleLibc.spawnAddCloseFrom() { _ = closeFrom(&actions, 3) }
    let argv: [UnsafeMutablePointer<CChar>?] = arguments.map { strdup($0) } + [nil]
    let envp: [UnsafeMutablePointer<CChar>?] = ProcessInfo.processInfo.environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
    defer {
        argv.forEach { free($0) }
        envp.forEach { free($0) }
    }
    var child: pid_t = 0
    let spawned = posix_spawn(&child, arguments[0], &actions, nil, argv, envp)
    if capture { close(pipeEnds[1]) }
    guard spawned == 0 else {
        if capture { close(pipeEnds[0]) }
        throw BenchFailure("cannot run \(arguments[0]): posix_spawn answered \(spawned)")
    }
    var output: [UInt8] = []
    if capture {
        var buffer = [UInt8](repeating: 0, count: 16_384)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(pipeEnds[0], $0.baseAddress, $0.count) }
            if count > 0 { output += buffer[0..<count]; continue }
            if count < 0 && errno == EINTR { continue }
            break
        }
        close(pipeEnds[0])
    }
    var status: Int32 = 0
    while waitpid(child, &status, 0) < 0 && errno == EINTR {}
    return String(decoding: output, as: UTF8.self)
}

/// One private tmux server (its own `-L` socket) with one session of a fixed size.
struct ConsoleTmux {
    let executable: String
    let socket = "gatepass-bench-\(UUID().uuidString.prefix(8))"
    static let session = "gpbench"
    static let target = "gpbench:0.0"
    /// The pane's program between measurements: clears the screen and waits.
    static let idleCommand = #"printf '\033[H\033[2J\033[3J'; exec sleep 600"#

    @discardableResult
    func run(_ arguments: [String], capture: Bool = true) throws -> String {
        try consoleSpawn([executable, "-L", socket] + arguments, capture: capture)
    }

    func start(columns: Int, rows: Int) throws {
        try run(["new-session", "-d", "-s", Self.session, "-x", String(columns), "-y", String(rows), Self.idleCommand],
                capture: false)
        // A program that ends leaves its pane (dead) instead of ending the session.
        try run(["set-option", "-w", "-t", Self.session, "remain-on-exit", "on"], capture: false)
    }

    func screen() throws -> String { try run(["capture-pane", "-p", "-t", Self.target]) }

    func respawn(_ command: String) throws { try run(["respawn-pane", "-k", "-t", Self.target, command], capture: false) }

    func keys(_ keys: String...) throws { try run(["send-keys", "-t", Self.target] + keys, capture: false) }
    func literal(_ text: String) throws { try run(["send-keys", "-t", Self.target, "-l", text], capture: false) }

    /// Polls the pane about every 2 ms until it shows `text`; answers the time it was first
    /// seen (the end of the poll that saw it) and the screen then, nil after `timeout` seconds.
    /// Every poll's cost is appended to `pollCosts`.
    func waitFor(_ text: String, timeout: Double, pollCosts: inout [Double]) throws -> (at: UInt64, screen: String)? {
        let deadline = monotonicNanoseconds() + UInt64(timeout * 1e9)
        while true {
            let started = monotonicNanoseconds()
            let shown = try screen()
            let finished = monotonicNanoseconds()
            pollCosts.append(Double(finished - started) / 1e6)
            if shown.contains(text) { return (finished, shown) }
            if finished > deadline { return nil }
            let next = started + 2_000_000
            if next > finished { usleep(UInt32((next - finished) / 1000)) }
        }
    }

    /// Puts the idle program back and waits until `text` is gone from the pane.
    func reset(awayFrom text: String) throws {
        try respawn(Self.idleCommand)
        try run(["clear-history", "-t", Self.target], capture: false)
        let deadline = monotonicNanoseconds() + 5_000_000_000
        while try screen().contains(text) {
            guard monotonicNanoseconds() < deadline else { throw BenchFailure("the tmux pane still shows \(text) after a reset") }
            usleep(2000)
        }
    }

    /// Starts `command` in the pane and answers the milliseconds until `text` shows.
    func timeUntilShown(_ text: String, command: String, pollCosts: inout [Double]) throws -> Double {
        try reset(awayFrom: text)
        let start = monotonicNanoseconds()
        try respawn(command)
        guard let seen = try waitFor(text, timeout: 20, pollCosts: &pollCosts) else {
            let shown = (try? screen()) ?? ""
            throw BenchFailure("the pane never showed \"\(text)\" for: \(command)\nthe pane showed:\n\(shown)")
        }
        return Double(seen.at - start) / 1e6
    }

    /// Ends the tmux server and removes its socket file (tmux leaves it behind).
    func kill() {
        _ = try? run(["kill-server"], capture: false)
        let folder = ProcessInfo.processInfo.environment["TMUX_TMPDIR"].flatMap { $0.isEmpty ? nil : $0 } ?? "/tmp"
        unlink("\(folder)/tmux-\(getuid())/\(socket)")
    }
}

func shellQuoted(_ text: String) -> String { "'" + text.replacingOccurrences(of: "'", with: "'\\''") + "'" }

/// The `gatepass` executable of the same build as this bench.
func consoleExecutable() throws -> String {
    let me = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
    let path = URL(fileURLWithPath: me).deletingLastPathComponent().appendingPathComponent("gatepass").path
    guard FileManager.default.isExecutableFile(atPath: path) else {
        throw BenchFailure("\(path) is missing; build it first: swift build -c release --product gatepass")
    }
    return path
}

func tmuxExecutable() throws -> String {
    for directory in ["/usr/bin", "/usr/local/bin", "/bin"] where FileManager.default.isExecutableFile(atPath: directory + "/tmux") {
        return directory + "/tmux"
    }
    throw BenchFailure("tmux is not installed; install it (apt-get install tmux) to run the console scenario")
}

// MARK: - A pseudo-terminal for the real curses driver

/// glibc functions that Swift's Glibc module leaves out (glibc declares them only under
/// _XOPEN_SOURCE or _GNU_SOURCE), looked up with `dlsym` so they are called as C functions.
/// The corresponding C functions are `posix_openpt`, `grantpt`, `unlockpt`, `ptsname_r`
/// and `posix_spawn_file_actions_addclosefrom_np` (glibc 2.34).
enum ConsoleLibc {
    private static func symbol<Function>(_ name: String, as type: Function.Type) -> Function? {
        guard let program = dlopen(nil, RTLD_NOW), let address = dlsym(program, name) else { return nil }
        return unsafeBitCast(address, to: type)
    }
    static func posixOpenpt() -> (@convention(c) (Int32) -> Int32)? { symbol("posix_openpt", as: (@convention(c) (Int32) -> Int32).self) }
    static func grantpt() -> (@convention(c) (Int32) -> Int32)? { symbol("grantpt", as: (@convention(c) (Int32) -> Int32).self) }
    static func unlockpt() -> (@convention(c) (Int32) -> Int32)? { symbol("unlockpt", as: (@convention(c) (Int32) -> Int32).self) }
    static func ptsnameR() -> (@convention(c) (Int32, UnsafeMutablePointer<CChar>?, Int) -> Int32)? {
        symbol("ptsname_r", as: (@convention(c) (Int32, UnsafeMutablePointer<CChar>?, Int) -> Int32).self)
    }
    static func spawnAddCloseFrom() -> (@convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>?, Int32) -> Int32)? {
        symbol("posix_spawn_file_actions_addclosefrom_np",
               as: (@convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>?, Int32) -> Int32).self)
    }
}

/// The master side of a pty and a thread that reads everything written to it, like a
/// terminal emulator would, so curses never blocks on a full buffer.
final class ConsolePseudoTerminal: Sendable {
    let master: Int32
    let slavePath: String
    private let slave: Int32
    /// Bytes read from the master so far.
    let bytesRead = Atomic<Int>(0)
    private let drainFinished = Atomic<Bool>(false)

    /// Opens a pty whose slave reports `columns` x `rows` (`TIOCSWINSZ`).
    init(columns: Int, rows: Int) throws {
        guard let openMaster = ConsoleLibc.posixOpenpt(), let grant = ConsoleLibc.grantpt(),
              let unlock = ConsoleLibc.unlockpt(), let slaveName = ConsoleLibc.ptsnameR()
        else { throw BenchFailure("this C library lacks posix_openpt, grantpt, unlockpt or ptsname_r") }
        let master = openMaster(O_RDWR | O_NOCTTY)
        guard master >= 0, grant(master) == 0, unlock(master) == 0 else {
            throw BenchFailure("cannot open a pseudo-terminal (posix_openpt): errno \(errno)")
        }
        var name = [CChar](repeating: 0, count: 128)
        guard slaveName(master, &name, name.count) == 0 else {
            Glibc.close(master)
            throw BenchFailure("ptsname_r failed: errno \(errno)")
        }
        self.master = master
        slavePath = String(cString: name)
        // Held open until `close()`: with no slave descriptor open, reading the master fails
        // at once (EIO) and the drain would stop before curses starts.
        slave = open(slavePath, O_RDWR | O_NOCTTY)
        guard slave >= 0 else { throw BenchFailure("cannot open \(slavePath): errno \(errno)") }
        var size = winsize(ws_row: UInt16(rows), ws_col: UInt16(columns), ws_xpixel: 0, ws_ypixel: 0)
        guard ioctl(slave, UInt(TIOCSWINSZ), &size) == 0 else { throw BenchFailure("TIOCSWINSZ failed: errno \(errno)") }
    }

    func startDraining() {
        let thread = Thread { [self] in
            var buffer = [UInt8](repeating: 0, count: 65_536)
            while true {
                let count = buffer.withUnsafeMutableBytes { read(master, $0.baseAddress, $0.count) }
                if count > 0 { bytesRead.add(count, ordering: .relaxed); continue }
                if count < 0 && errno == EINTR { continue }
                break  // EIO: every slave descriptor is closed
            }
            drainFinished.store(true, ordering: .releasing)
        }
        thread.start()
    }

    /// The byte count once nothing more arrived for 10 ms (what one frame wrote is the difference).
    func settledByteCount() -> Int {
        var last = bytesRead.load(ordering: .relaxed)
        while true {
            usleep(10_000)
            let now = bytesRead.load(ordering: .relaxed)
            if now == last { return now }
            last = now
        }
    }

    /// Closes the slave, waits for the drain thread to see the end, and closes the master.
    func close() {
        Glibc.close(slave)
        let deadline = monotonicNanoseconds() + 2_000_000_000
        while !drainFinished.load(ordering: .acquiring) && monotonicNanoseconds() < deadline { usleep(1000) }
        Glibc.close(master)
    }
}

/// Runs `body` with a real `CursesTerminal` on `pty`.
///
/// `CursesTerminal.open` paints on the process's standard input and output (`newterm` on
/// `stdout`/`stdin`) and refuses when they are not terminals; rather than change the driver,
/// the bench points descriptors 0 and 1 at the pty's slave for the duration and puts them
/// back after. Nothing else in the bench reads stdin or prints to stdout meanwhile (progress
/// goes to stderr).
func withCursesOnPseudoTerminal<T>(_ pty: ConsolePseudoTerminal, terminalType: String,
                                   _ body: (CursesTerminal) throws -> T) throws -> T {
    fflush(nil)
    let slave = open(pty.slavePath, O_RDWR | O_NOCTTY)
    guard slave >= 0 else { throw BenchFailure("cannot open \(pty.slavePath): errno \(errno)") }
    let savedInput = dup(0)
    let savedOutput = dup(1)
    dup2(slave, 0)
    dup2(slave, 1)
    defer {
        fflush(nil)
        dup2(savedInput, 0)
        dup2(savedOutput, 1)
        close(savedInput)
        close(savedOutput)
        close(slave)
    }
    let terminal: CursesTerminal
    do {
        terminal = try CursesTerminal.open(environment: ["TERM": terminalType])
    } catch {
        throw BenchFailure("the curses driver did not open on \(pty.slavePath) with TERM=\(terminalType): \(error)")
    }
    defer { terminal.close() }
    return try body(terminal)
}

// MARK: - Services that answer with a response already in hand

/// The console's services, except that the approvals are the response already received:
/// what the screen does *after* the answer is what gets timed.
final class ConsolePrefetchedServices: ConsoleServices {
    let base: ClientCoreServices
    let approvals: ConsoleRead<[Visitor]>

    init(base: ClientCoreServices, approvals: ConsoleRead<[Visitor]>) {
        self.base = base
        self.approvals = approvals
    }

    func currentUser() -> ConsoleUser? { base.currentUser() }
    func serverURL() -> String { base.serverURL() }
    func setServerURL(_ url: String) throws(ConsoleError) { try base.setServerURL(url) }
    func sendCode(server: String, email: String) throws(ConsoleError) { try base.sendCode(server: server, email: email) }
    func logIn(server: String, email: String, code: String, allowPurge: Bool) throws(ConsoleError) -> ConsoleUser {
        try base.logIn(server: server, email: email, code: code, allowPurge: allowPurge)
    }
    func pendingApprovals() throws(ConsoleError) -> ConsoleRead<[Visitor]> { approvals }
    func visitorDetail(id: String) throws(ConsoleError) -> ConsoleRead<VisitorDetail> { try base.visitorDetail(id: id) }
    func decide(_ decision: ApprovalDecision, visitorId: String, note: String?) -> DecisionOutcome {
        base.decide(decision, visitorId: visitorId, note: note)
    }
}

// MARK: - The scenario

/// Adds `count` walk-ins AWAITING_APPROVAL to the demo organization, spread over the last
/// four hours, from 16 threads (the server's writer commits them in groups).
func seedPendingWalkIns(_ server: GatePassServer, count: Int) throws {
    final class Next: Sendable { let value = Atomic<Int>(0) }
    let next = Next()
    let failure = Mutex<String?>(nil)
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
                                     online: true, queued: (try? core.store.outboxCount()) ?? 0, live: false)
        }
        /// The tabs ConsoleSession.tabs() builds after a login (its background threads aside:
        /// they start before the request); only the Approvals tab appears.
        func tabs(approvals: ConsolePrefetchedServices) -> [any ConsoleScreen] {
            let now: () -> Date = { Date() }
            var tabs: [any ConsoleScreen] = []
            if user.role != .platformAdmin { tabs.append(ApprovalsScreen(services: approvals, clock: now)) }
            if user.mayScan { tabs.append(ScanScreen(services: services, clock: now, sourceDescription: nil)) }
            if user.role.managesOrganization {
                tabs.append(HistoryScreen(services: services, clock: now, timeZone: .current, homeDirectory: directory))
            }
            tabs.append(MoreScreen(services: services, clock: now))
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
