import Foundation

/// A stored one-time code: only its HMAC, never the code.
struct StoredOneTimeCode: Sendable {
    var hmac: [UInt8]
    var expiresAt: Date
    var wrongTries: Int
    var used: Bool
}

/// One-time login codes and the record of sends (for the rate limits).
protocol OTPRepository {
    /// Forgets the sends of `email` at or before `time`.
    func forgetSends(email: String, through time: Date) throws
    /// When codes were sent to `email`, oldest first.
    func sendTimes(email: String) throws -> [Date]
    func recordSend(email: String, at time: Date) throws
    /// Counts a code asked for an email of no user (one fixed row: stores nothing per request).
    func countUnknownSend() throws
    /// Replaces `email`'s code (a new code starts with no wrong tries and unused).
    func replaceCode(email: String, hmac: [UInt8], expiresAt: Date) throws
    func code(email: String) throws -> StoredOneTimeCode?
    /// Counts a failed try against `email`'s code, making the row when there is none (the
    /// stand-in row of `OneTimePasswords.redeem`); returns the rows changed.
    @discardableResult
    func countWrongTry(email: String) throws -> Int
    func markUsed(email: String) throws
    /// Deletes sends before `sentBefore` and codes that expired before `expiredBefore`.
    func purge(sentBefore: Date, expiredBefore: Date) throws
}
