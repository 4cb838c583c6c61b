import Foundation

/// Says "observable state changed" to whoever waits for a condition on that state: a
/// component calls `signal()` after each change, a waiter looks again at each signal. This is
/// how tests wait for "stream closed" or "N connections open" without sleeping.
///
/// The waiter's condition is evaluated outside the signal's own lock, and `signal()` takes
/// only that lock, so a component may signal while holding its locks and a condition may
/// take them: no lock order exists to get wrong.
public final class ChangeSignal: @unchecked Sendable {
    // @unchecked: `generation` is only touched while `condition` is locked.
    private let condition = NSCondition()
    private var generation: UInt64 = 0

    public init() {}

    /// Wakes every waiter to evaluate its condition again.
    public func signal() {
        condition.lock()
        generation &+= 1
        condition.broadcast()
        condition.unlock()
    }

    /// Returns true as soon as `predicate` holds, evaluating it now and after each signal;
    /// false if `timeout` passes first (a limit that only catches a hang).
    public func wait(timeout: TimeInterval = 30, until predicate: () throws -> Bool) rethrows -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while true {
            condition.lock()
            let seen = generation
            condition.unlock()
            if try predicate() { return true }
            condition.lock()
            while generation == seen {
                guard condition.wait(until: deadline) else {
                    condition.unlock()
                    return try predicate()
                }
            }
            condition.unlock()
        }
    }
}
