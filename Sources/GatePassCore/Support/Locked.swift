import Foundation

/// A value behind a plain mutex (`NSLock`, a pthread mutex).
///
/// Used instead of `Synchronization.Mutex` on hot paths: on Linux with Swift 6.3, `Mutex`
/// is a priority-inheritance futex whose contended path goes through the kernel's rt_mutex,
/// which under request load made contended sections several times slower
/// (swiftlang/swift#88440). A plain mutex spins briefly in user space first. It is also a
/// lock ThreadSanitizer knows; `Mutex` is a raw futex to it, which made it report the HTTP
/// server's stream table (`stop` against a stream's `close`) as a data race.
///
/// `Value` must be `Sendable`: the lock serialises access to the value, but whatever a caller
/// takes out of `withLock` crosses to its thread, so a non-Sendable reference inside would
/// be shared unsynchronised. (Hold a non-Sendable object in the type that owns it instead.)
public final class Locked<Value: Sendable>: @unchecked Sendable {
    // @unchecked: `value` is only touched while `lock` is held.
    private var value: Value
    private let lock = NSLock()

    public init(_ value: Value) { self.value = value }

    public func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }
}
