import Foundation
import GatePassCore

/// Drains the outbox in the background: every `interval` (30 s by default), and at once
/// when the server becomes reachable again. While the server is unreachable it probes
/// `/api/healthz` with backoff (1, 2, 4 … s, capped at `probeCap`) instead of waiting out
/// the whole interval, so a reconnect is noticed within seconds.
///
/// Used by the console and the kiosk; the scriptable commands drain on demand.
///
/// Time comes from the injected `WallClock` (the core's by default): waits end when that
/// clock reaches their deadline, so a test that moves its clock calls `clockDidAdvance()`
/// and the service acts as if the time had passed.
public final class OutboxService: @unchecked Sendable {
    // @unchecked: mutable state is guarded by `condition`.
    private let core: ClientCore
    private let interval: TimeInterval
    private let probeCap: TimeInterval
    private let clock: any WallClock
    private let condition = NSCondition()
    private var running = false
    private var poked = false
    private var thread: Thread?
    /// Signalled by the thread as it ends; `stop()` waits for it.
    private var finished: DispatchSemaphore?
    private let onReport: @Sendable (DrainReport, _ online: Bool) -> Void
    private let onWait: @Sendable (_ until: Date) -> Void

    /// - Parameters:
    ///   - clock: what "now" and the waits are measured on; nil means the core's clock.
    ///   - onReport: called after every drain and every probe, with whether the server
    ///     answered, on the service's thread.
    ///   - onWait: a hook for tests that move the clock: called on the service's thread as
    ///     each wait begins, with its deadline on `clock`. A `clockDidAdvance()` made after it
    ///     is seen by that wait. It must not call the service.
    public init(core: ClientCore, interval: TimeInterval = 30, probeCap: TimeInterval = 30, clock: (any WallClock)? = nil,
                onReport: @escaping @Sendable (DrainReport, Bool) -> Void = { _, _ in },
                onWait: @escaping @Sendable (_ until: Date) -> Void = { _ in }) {
        self.core = core
        self.interval = interval
        self.probeCap = probeCap
        self.clock = clock ?? core.clock
        self.onWait = onWait
        self.onReport = onReport
    }

    /// Starts the service's thread (again after a `stop()`).
    public func start() {
        condition.lock()
        defer { condition.unlock() }
        guard !running else { return }
        running = true
        let finished = DispatchSemaphore(value: 0)
        let thread = Thread { [self] in
            loop()
            finished.signal()
        }
        thread.name = "gatepass-outbox"
        self.thread = thread
        self.finished = finished
        thread.start()
    }

    /// Asks for a drain now (after a new entry, or a login).
    public func poke() {
        condition.lock()
        poked = true
        condition.signal()
        condition.unlock()
    }

    /// Tells a waiting service that the injected clock moved (a test clock), so it checks
    /// its deadline now rather than after the real time it computed. Harmless otherwise.
    public func clockDidAdvance() {
        condition.lock()
        condition.broadcast()
        condition.unlock()
    }

    /// Ends the service and returns once its thread has exited: no drain, probe or report
    /// runs after it returns. A drain in flight finishes first (at most the transport's
    /// request timeout). Called from `onReport` it returns at once, the thread ending after.
    public func stop() {
        condition.lock()
        running = false
        let thread = self.thread
        let finished = self.finished
        self.thread = nil
        self.finished = nil
        condition.broadcast()
        condition.unlock()
        guard let thread, let finished, Thread.current !== thread else { return }
        finished.wait()
    }

    /// Waits until the clock has moved `seconds` on, unless poked or stopped; returns false
    /// when stopping.
    private func sleep(_ seconds: TimeInterval) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        let deadline = clock.now().addingTimeInterval(seconds)
        // Under the lock: a clockDidAdvance() after this waits for the wait below to begin.
        onWait(deadline)
        while running && !poked {
            let remaining = deadline.timeIntervalSince(clock.now())
            if remaining <= 0 { break }
            // Real time stands in for the clock's between two looks at it; `clockDidAdvance`
            // cuts the wait short when the clock is moved by hand.
            _ = condition.wait(until: Date().addingTimeInterval(remaining))
        }
        poked = false
        return running
    }

    private var isRunning: Bool {
        condition.lock()
        defer { condition.unlock() }
        return running
    }

    private func loop() {
        var probeAttempts = 0
        let probeBackoff = Backoff(base: 1, cap: probeCap)
        while isRunning {
            // The background handle: a request hanging here never holds the person's requests.
            let report = core.backgroundDrainer.drain()
            if report.offline {
                onReport(report, false)
                // Probe until the server answers, then drain at once.
                while isRunning {
                    probeAttempts += 1
                    guard sleep(probeBackoff.ceiling(afterAttempts: probeAttempts)) else { return }
                    if let session = try? core.session(), core.backgroundAPI(session.server).isHealthy() {
                        probeAttempts = 0
                        onReport(DrainReport(), true)
                        break
                    }
                }
                continue
            }
            onReport(report, true)
            // Sleep until the interval ends or the earliest waiting entry is due.
            var wait = interval
            let now = clock.now()
            if let due = (report.waiting + report.deferred).map(\.nextAttemptAt).min() {
                wait = max(0.05, min(wait, due.timeIntervalSince(now)))
            }
            guard sleep(wait) else { return }
        }
    }
}
