import Foundation

/// A value behind a pthread mutex (`NSLock`).
///
/// Not `Synchronization.Mutex`: on Linux that is a raw futex, which ThreadSanitizer does not
/// know as a lock, so it reported the stream table (`stop` against a stream's `close`) as a
/// data race; a pthread mutex is understood by TSan and is also the faster one when
/// contended (swiftlang/swift#88440).
final class Locked<Value>: @unchecked Sendable {
    // @unchecked: `value` is only touched while `lock` is held.
    private var value: Value
    private let lock = NSLock()

    init(_ value: Value) { self.value = value }

    func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }
}
