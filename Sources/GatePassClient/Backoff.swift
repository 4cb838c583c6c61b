#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation

/// Exponential backoff with full jitter ("Exponential Backoff And Jitter", AWS Architecture
/// Blog): the wait after the n-th failure is uniform in [0, min(cap, base · 2ⁿ)].
public struct Backoff: Sendable, Equatable {
    public var base: TimeInterval
    public var cap: TimeInterval

    public init(base: TimeInterval = 1, cap: TimeInterval = 300) {
        self.base = base
        self.cap = cap
    }

    /// The ceiling of the wait after `attempts` failures (attempts ≥ 1).
    public func ceiling(afterAttempts attempts: Int) -> TimeInterval {
        let exponent = min(max(attempts - 1, 0), 30)
        return min(cap, base * pow(2, Double(exponent)))
    }

    /// The wait after `attempts` failures: `jitter`'s fraction of the ceiling.
    ///
    /// The randomness comes in as a value, not as `inout some RandomNumberGenerator`: passing
    /// the empty `SystemRandomNumberGenerator` through a generic `inout` makes ThreadSanitizer
    /// builds write to an invalid address (swiftlang/swift#66099), and a value is also what a
    /// test injects to pin the wait.
    public func delay(afterAttempts attempts: Int, jitter: JitterSource = .system) -> TimeInterval {
        ceiling(afterAttempts: attempts) * jitter.fraction()
    }
}

/// Where the jitter of a `Backoff` comes from: fractions uniform in [0, 1].
///
/// ```swift
/// let wait = Backoff().delay(afterAttempts: 3)                          // the kernel's randomness
/// let longest = Backoff().delay(afterAttempts: 3, jitter: .init { 1 })  // a test's fixed fraction
/// ```
public struct JitterSource: Sendable {
    private let next: @Sendable () -> Double

    /// - Parameter next: answers a fraction in [0, 1]; values outside are clamped, NaN is 0.
    public init(_ next: @escaping @Sendable () -> Double) {
        self.next = next
    }

    /// The next fraction, in [0, 1].
    public func fraction() -> Double {
        let value = next()
        guard !value.isNaN else { return 0 }
        return min(1, max(0, value))
    }

    /// Fractions from the kernel's random bytes (`getentropy(3)`, which reads `getrandom(2)`),
    /// 53 bits each, so every representable step of [0, 1] can come up.
    public static let system = JitterSource { Double(kernelRandom() >> 11) / Double((UInt64(1) << 53) - 1) }

    /// 64 random bits. The corresponding C function is `getentropy`; it only fails where the
    /// kernel has no `getrandom` (older than 3.17), and then the clock's nanoseconds stand in:
    /// jitter spreads retries out, it guards no secret.
    private static func kernelRandom() -> UInt64 {
        var value: UInt64 = 0
        let result = withUnsafeMutableBytes(of: &value) { getentropy($0.baseAddress, $0.count) }
        if result == 0 { return value }
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return UInt64(truncatingIfNeeded: now.tv_nsec) &* 0x9E37_79B9_7F4A_7C15
    }
}
