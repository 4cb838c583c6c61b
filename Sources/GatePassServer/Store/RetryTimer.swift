import Foundation

/// Runs work again later, off the caller's thread: how the store retries what it must not
/// wait for (a journal truncation a reader is in the way of). Passed in, so a test runs the
/// retries when it chooses instead of sleeping.
public protocol RetryTimer: Sendable {
    /// Runs `work` once, about `delay` from now, on a thread of the timer's.
    func schedule(after delay: Duration, _ work: @escaping @Sendable () -> Void)
}

/// The real timer: a global dispatch queue.
public struct DispatchRetryTimer: RetryTimer {
    public init() {}

    public func schedule(after delay: Duration, _ work: @escaping @Sendable () -> Void) {
        let (seconds, attoseconds) = delay.components
        let nanoseconds = Int(seconds) * 1_000_000_000 + Int(attoseconds / 1_000_000_000)
        DispatchQueue.global(qos: .utility).asyncAfter(deadline: .now() + .nanoseconds(nanoseconds), execute: work)
    }
}
