import CSpawn
import Foundation

/// Hands a code to the configured delivery program (email as argument, code on stdin),
/// off the request thread so delivery time never shows in the answer's timing.
///
/// Nothing the program does can crash or stall the server: the code (a few bytes, well
/// under a pipe's buffer) is written without waiting for the program to read it; a program
/// that exits before reading only makes that write fail (SIGPIPE is ignored by the server,
/// see `GatePassServer`); and no thread waits for the program: a timer looks for its exit
/// (`waitpid` with `WNOHANG`) every 100 ms, and one still running after `timeout` is
/// terminated, then killed. Every failure is one log line naming the program and what
/// happened — never the code or the email.
///
/// The program is started with `posix_spawn` rather than Foundation's `Process`, whose
/// termination handler was seen never to fire here (the child stayed a zombie).
enum OTPDelivery {
    static func deliver(code: String, to email: String, command: String, timeout: Duration, log: any LogSink) {
        var descriptors: [Int32] = [-1, -1]
        guard pipe(&descriptors) == 0 else {
            log.log("otp delivery: cannot make a pipe for \(command): errno \(errno)")
            return
        }
        let (readEnd, writeEnd) = (descriptors[0], descriptors[1])
        // Neither end may leak into other programs the server starts (dup2 onto 0 clears it
        // for the delivery program's own standard input).
        _ = fcntl(readEnd, F_SETFD, FD_CLOEXEC)
        _ = fcntl(writeEnd, F_SETFD, FD_CLOEXEC)
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, readEnd, 0)
        // The program gets standard input, output and error only: a client socket or a
        // database descriptor inherited by a program that hangs would keep it open.
        gatepass_spawn_close_from(&actions, 3)
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        // The server ignores SIGPIPE; the program gets the default back.
        var defaults = sigset_t()
        sigemptyset(&defaults)
        sigaddset(&defaults, SIGPIPE)
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        // Its own process group, so that ending it ends what it started too (a shell script's
        // children would otherwise outlive it, holding the server's output pipes).
        posix_spawnattr_setpgroup(&attributes, 0)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETPGROUP))
        let arguments: [UnsafeMutablePointer<CChar>?] = [strdup(command), strdup(email)]
        defer { arguments.forEach { free($0) } }
        var argv = arguments + [nil]
        var process: pid_t = 0
        let spawned = posix_spawn(&process, command, &actions, &attributes, &argv, environ)
        close(readEnd)
        guard spawned == 0 else {
            close(writeEnd)
            log.log("otp delivery: cannot run \(command): \(String(cString: strerror(spawned)))")
            return
        }
        let line = Array((code + "\n").utf8)
        let written = line.withUnsafeBytes { write(writeEnd, $0.baseAddress, $0.count) }
        if written != line.count {
            log.log("otp delivery: \(command) did not take the code on its standard input (it closed it)")
        }
        close(writeEnd)
        watch(process, command: command, deadline: .now + timeout, log: log)
    }

    /// Looks for the program's exit every 100 ms without holding a thread; reports how it
    /// ended, and ends it when it outlives `deadline` (SIGTERM, then SIGKILL a second later).
    private static func watch(_ process: pid_t, command: String, deadline: ContinuousClock.Instant, log: any LogSink,
                              terminatedAt: ContinuousClock.Instant? = nil) {
        var status: Int32 = 0
        let reaped = waitpid(process, &status, WNOHANG)
        if reaped == process {
            // Whatever it left running in its group goes with it.
            kill(-process, SIGKILL)
            let signal = status & 0x7F
            if signal != 0 {
                log.log("otp delivery: \(command) was ended by signal \(signal)")
            } else if (status >> 8) & 0xFF != 0 {
                log.log("otp delivery: \(command) exited with status \((status >> 8) & 0xFF)")
            }
            return
        }
        guard reaped == 0 else { return } // not our child any more: nothing left to watch
        var terminatedAt = terminatedAt
        let now = ContinuousClock.now
        if terminatedAt == nil && now >= deadline {
            log.log("otp delivery: \(command) still running after its time limit; stopping it")
            kill(-process, SIGTERM)
            terminatedAt = now
        } else if let terminated = terminatedAt, now - terminated >= .seconds(1) {
            kill(-process, SIGKILL)
        }
        let terminated = terminatedAt
        DispatchQueue.global(qos: .utility).asyncAfter(deadline: .now() + .milliseconds(100)) {
            watch(process, command: command, deadline: deadline, log: log, terminatedAt: terminated)
        }
    }
}
