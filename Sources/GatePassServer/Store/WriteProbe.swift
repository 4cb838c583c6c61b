import Foundation
import GatePassCore

/// Whether the database can be written, for `/api/healthz`: probed through the writer
/// thread at most once a second (on the injected clock) and cached in between, so a
/// monitor polling fast costs one lock round trip a second, never a write.
///
/// A probe waits its turn behind queued writes and for another process's lock up to the busy
/// timeout; meanwhile other health checks answer with the previous outcome instead of
/// piling up behind it.
final class WriteProbe: Sendable {
    struct Outcome: Sendable {
        var probedAt: Date
        /// Nil when the database could be written; otherwise why not (for the log).
        var failure: String?
    }

    static let interval: TimeInterval = 1

    private let probe: @Sendable () throws -> Void
    private let clock: any Clock
    private let logSink: any LogSink
    private let last = Locked<Outcome?>(nil)
    private let probing = NSLock()

    init(clock: any Clock, logSink: any LogSink, probe: @escaping @Sendable () throws -> Void) {
        self.clock = clock
        self.logSink = logSink
        self.probe = probe
    }

    /// Nil when the database can be written (as of at most a second ago); else the cause.
    func failure() -> String? {
        if let fresh = freshOutcome() { return fresh.failure }
        guard probing.try() else {
            // A probe is running: answer with what the last one found, or wait for this one.
            if let previous = last.withLock({ $0 }) { return previous.failure }
            probing.lock()
            probing.unlock()
            return last.withLock { $0 }?.failure ?? "the write probe did not finish"
        }
        defer { probing.unlock() }
        if let fresh = freshOutcome() { return fresh.failure }
        var failure: String?
        do {
            try probe()
        } catch {
            failure = "\(error)"
            logSink.log("healthz: the database cannot be written: \(error)")
        }
        last.withLock { $0 = Outcome(probedAt: clock.now(), failure: failure) }
        return failure
    }

    private func freshOutcome() -> Outcome? {
        let now = clock.now()
        return last.withLock { outcome in
            // A clock set back also makes the outcome stale.
            guard let outcome, now >= outcome.probedAt, now.timeIntervalSince(outcome.probedAt) < Self.interval else { return nil }
            return outcome
        }
    }
}
