import Foundation

/// Where "now" comes from. Passed in everywhere time matters, so tests can move it
/// (OTP expiry, token lifetime, validity windows, backoff).
public protocol WallClock: Sendable {
    func now() -> Date
}

/// The real clock.
public struct SystemWallClock: WallClock {
    public init() {}
    public func now() -> Date { Date() }
}
