import Foundation
import GatePassCore

/// Drains the outbox in the background: every `interval` (30 s by default), and at once
/// when the server becomes reachable again. While the server is unreachable it probes
/// `/api/healthz` with backoff (1, 2, 4 … s, capped at `probeCap`) instead of waiting out
/// the whole interval, so a reconnect is noticed within seconds.
///
/// Used by the console and the kiosk; the scriptable commands drain on demand.
public final class OutboxService: @unchecked Sendable {
    // @unchecked: mutable state is guarded by `condition`.
    private let core: ClientCore
    private let interval: TimeInterval
    private let probeCap: TimeInterval
    private let condition = NSCondition()
    private var running = false
    private var poked = false
    private var thread: Thread?
    private let onReport: @Sendable (DrainReport, _ online: Bool) -> Void

    /// - Parameters:
    ///   - onReport: called after every drain and every probe, with whether the server answered.
    public init(core: ClientCore, interval: TimeInterval = 30, probeCap: TimeInterval = 30,
                onReport: @escaping @Sendable (DrainReport, Bool) -> Void = { _, _ in }) {
        self.core = core
        self.interval = interval
        self.probeCap = probeCap
        self.onReport = onReport
    }

    public func start() {
        condition.lock()
        defer { condition.unlock() }
        guard !running else { return }
        running = true
        let thread = Thread { [self] in loop() }
        thread.name = "gatepass-outbox"
        self.thread = thread
        thread.start()
    }

    /// Asks for a drain now (after a new entry, or a login).
    public func poke() {
        condition.lock()
        poked = true
        condition.signal()
        condition.unlock()
    }

    public func stop() {
        condition.lock()
        running = false
        condition.signal()
        condition.unlock()
    }

    /// Waits up to `seconds` unless poked or stopped; returns false when stopping.
    private func sleep(_ seconds: TimeInterval) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        let deadline = Date().addingTimeInterval(seconds)
        while running && !poked {
            if !condition.wait(until: deadline) { break }
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
            let now = Date()
            if let due = (report.waiting + report.deferred).map(\.nextAttemptAt).min() {
                wait = max(0.05, min(wait, due.timeIntervalSince(now)))
            }
            guard sleep(wait) else { return }
        }
    }
}
