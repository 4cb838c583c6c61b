#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import CNcursesw
import GatePassCore
import Synchronization

/// Gives the terminal back (`endwin`) on every way out of the process: `close()`, `exit` (an
/// `atexit` hook), a terminating signal, and a crash (a Swift trap is SIGILL or SIGTRAP).
///
/// C signal handlers cannot capture context, so this is the one piece of process-wide state
/// the driver keeps: curses itself drives one screen per process. `isActive` is a lock-free
/// atomic, so a handler may read it; whoever flips it from true to false calls `endwin`, which
/// makes restoring idempotent across `close()`, `atexit` and handlers.
enum TerminalRestore {
    /// True while curses owns the terminal.
    static let isActive = Atomic<Bool>(false)

    /// The signals that end the process: restore first, then let the previous disposition act
    /// (normally the default: terminate, or dump core and report the crash).
    static let handledSignals: [Int32] = [SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGSEGV, SIGBUS, SIGILL, SIGTRAP, SIGFPE, SIGABRT]

    /// The dispositions found when the handlers were installed, indexed by signal number.
    /// Written only by `installHandlers` before any handler can run and by nobody after; read
    /// by the handlers. A fixed buffer because a handler must not touch Swift collections.
    nonisolated(unsafe) static let previousActions: UnsafeMutablePointer<sigaction> = {
        let buffer = UnsafeMutablePointer<sigaction>.allocate(capacity: 32)
        buffer.initialize(repeating: sigaction(), count: 32)
        return buffer
    }()

    private static let atexitRegistered = Locked<Bool>(false)

    /// Calls `endwin` once, if curses still owns the terminal.
    static func restore() {
        if isActive.exchange(false, ordering: .sequentiallyConsistent) {
            endwin()
        }
    }

    /// Installs the signal handlers (before `newterm`, so curses leaves SIGINT and SIGTERM to
    /// us) and, once per process, the `atexit` hook.
    static func installHandlers() {
        atexitRegistered.withLock { registered in
            guard !registered else { return }
            registered = true
            atexit { TerminalRestore.restore() }
        }
        for signal in handledSignals {
            var action = sigaction()
            action.__sigaction_handler.sa_sigaction = restoreOnSignal
            action.sa_flags = SA_SIGINFO
            sigemptyset(&action.sa_mask)
            sigaction(signal, &action, previousActions + Int(signal))
        }
    }

    /// Puts back the dispositions found by `installHandlers` (after `close()`).
    static func removeHandlers() {
        for signal in handledSignals {
            sigaction(signal, previousActions + Int(signal), nil)
        }
    }
}

/// The handler for every signal in `handledSignals`. `endwin` is not async-signal-safe; as
/// every curses program does, this is a best effort, and the process is ending anyway.
private func restoreOnSignal(_ signal: Int32, _ info: UnsafeMutablePointer<siginfo_t>?, _ context: UnsafeMutableRawPointer?) {
    TerminalRestore.restore()
    let previous = TerminalRestore.previousActions + Int(signal)
    // A fault raised by the CPU (si_code > 0) happens again when the handler returns, so it
    // reaches the previous handler (Swift's backtracer, or the default core dump) with the
    // real fault address. A Swift trap is `ud2` (SIGILL) on x86_64 and `brk` (SIGTRAP) on
    // arm64; both leave the program counter on the instruction. x86's `int3` does not.
    let raisedByFault = (info?.pointee.si_code ?? 0) > 0
    var isFault = signal == SIGSEGV || signal == SIGBUS || signal == SIGILL || signal == SIGFPE
    #if arch(arm64)
    isFault = isFault || signal == SIGTRAP
    #endif
    if isFault && raisedByFault {
        sigaction(signal, previous, nil)
        return
    }
    // A terminate signal the program handles itself goes on to its handler. Anything else
    // must end the process now: Swift's backtracer catches SIGQUIT, and SIGABRT sent with
    // kill, then lets the process run on, and a later refresh would take the terminal back.
    // The default disposition, raised again, is delivered when this handler returns.
    let previousHandler = unsafeBitCast(previous.pointee.__sigaction_handler.sa_handler, to: Int.self)
    let previousIsProgramHandler = previousHandler != 0 && previousHandler != 1  // not SIG_DFL, SIG_IGN
    let isTerminateRequest = signal == SIGINT || signal == SIGTERM || signal == SIGHUP
    if isTerminateRequest && previousIsProgramHandler {
        sigaction(signal, previous, nil)
    } else {
        var defaultAction = sigaction()
        defaultAction.__sigaction_handler.sa_handler = SIG_DFL
        sigaction(signal, &defaultAction, nil)
    }
    raise(signal)
}
