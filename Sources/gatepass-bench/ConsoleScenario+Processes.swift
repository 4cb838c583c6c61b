import CursesTerminal
import Foundation
import GatePassClient
import GatePassConsole
import GatePassCore
import GatePassServer
import LoopbackHTTP
import Synchronization

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

