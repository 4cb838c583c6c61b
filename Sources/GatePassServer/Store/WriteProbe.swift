import Foundation
import GatePassCore

/// Whether the database can be read afresh and written, for `/api/healthz`: probed at most
/// once a second (on the injected clock) and cached in between, so a monitor polling fast
/// costs one new connection and one lock round trip through the writer a second, never a write.
///
/// A probe waits its turn behind queued writes and for another process's lock up to the busy
/// timeout; meanwhile other health checks answer with the previous outcome instead of
/// piling up behind it.
// @unchecked: `last` and `probing` are guarded by `condition`.
final class WriteProbe: @unchecked Sendable {
    struct Outcome: Sendable {
        var probedAt: Date
        /// Nil when the database could be written; otherwise why not (for the log).
        var failure: String?
    }

    static let interval: TimeInterval = 1

    private let probe: @Sendable () throws -> Void
    private let clock: any WallClock
    private let logSink: any LogSink
    // `condition` guards `last` and `probing`.
    private let condition = NSCondition()
    private var last: Outcome?
    private var probing = false

    init(clock: any WallClock, logSink: any LogSink, probe: @escaping @Sendable () throws -> Void) {
        self.clock = clock
        self.logSink = logSink
        self.probe = probe
    }

    /// Nil when the database can be written (as of at most a second ago); else the cause.
    func failure() -> String? {
        condition.lock()
        if let fresh = freshOutcome() {
            condition.unlock()
            return fresh.failure
        }
        if probing {
            // A probe is running: answer with what the last one found, or wait for this one.
            while probing && last == nil { condition.wait() }
            let outcome = last
            condition.unlock()
            return outcome?.failure
        }
        probing = true
        condition.unlock()
        var failure: String?
        do {
            try probe()
        } catch {
            failure = "\(error)"
            logSink.log("healthz: the database cannot be written: \(error)")
        }
        let outcome = Outcome(probedAt: clock.now(), failure: failure)
        condition.lock()
        last = outcome
        probing = false
        condition.broadcast()
        condition.unlock()
        return failure
    }

    /// Under `condition`.
    private func freshOutcome() -> Outcome? {
        let now = clock.now()
        // A clock set back also makes the outcome stale.
        guard let last, now >= last.probedAt, now.timeIntervalSince(last.probedAt) < Self.interval else { return nil }
        return last
    }
}
