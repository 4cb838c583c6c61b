import CursesTerminal
import Foundation
import GatePassClient
import GatePassConsole
import GatePassConsoleServices
import GatePassCore
import GatePassServer
import LoopbackHTTP
import Synchronization

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
    func noteLiveApproval(_ change: LiveListChange) { base.noteLiveApproval(change) }
    func visitorDetail(id: String) throws(ConsoleError) -> ConsoleRead<VisitorDetail> { try base.visitorDetail(id: id) }
    func decide(_ decision: ApprovalDecision, visitorId: String, note: String?) -> DecisionOutcome {
        base.decide(decision, visitorId: visitorId, note: note)
    }
}

