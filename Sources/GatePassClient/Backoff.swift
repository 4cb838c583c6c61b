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

    public func delay(afterAttempts attempts: Int, using generator: inout some RandomNumberGenerator) -> TimeInterval {
        Double.random(in: 0...ceiling(afterAttempts: attempts), using: &generator)
    }
}
