import Foundation
import GatePassCore
import GatePassCrypto

/// The OTP rules of api.md: 6 random digits, valid for a configurable 10 minutes, single
/// use, a new code replaces the old, a code dies after 5 wrong tries, at most 5 sends per
/// email per hour and 1 per 30 s. Codes are stored only as an HMAC keyed by the server
/// secret and compared in constant time.
///
/// Unknown emails go through the same steps (a code is made and counted against the same
/// limits, and the transaction writes as much), so neither the answer nor its timing says
/// whether an email is known; but nothing is stored for them, so that unauthenticated
/// requests cannot grow the database: their sends are kept in memory (`UnknownSends`,
/// bounded), and the transaction writes one fixed counter row instead of a code and a send.
final class OneTimePasswords: Sendable {
    struct Rules: Sendable {
        var lifetimeSeconds: Int
        var maxWrongTries: Int
        var sendsPerHour: Int
        var resendIntervalSeconds: Int
    }

    /// Compares a stored HMAC with the one just computed; constant-time. Tests count the calls.
    typealias Comparator = @Sendable (_ stored: [UInt8], _ computed: [UInt8]) -> Bool

    let rules: Rules
    private let key: [UInt8]
    /// Plain codes, kept only with --dev so `dev-peek-otp` can show them.
    private let devCodes: Locked<[String: String]>?
    private let compare: Comparator
    /// Stands in for the stored HMAC when an email has no code, so that case does the same work.
    private let absentCodeHMAC: [UInt8]
    /// When codes were "sent" to emails of no user in the last hour, for the same limits.
    private let unknownSends = Locked<[String: [Date]]>([:])
    /// Unknown emails remembered at most; beyond, the oldest are forgotten (an attacker with
    /// many emails then finds their limits reset, which tells nothing about any user).
    static let unknownSendsLimit = 100_000

    init(rules: Rules, secret: ServerSecret, devMode: Bool, compare: @escaping Comparator = { constantTimeEquals($0, $1) }) {
        self.rules = rules
        key = secret.key(for: "otp")
        devCodes = devMode ? Locked([:]) : nil
        self.compare = compare
        absentCodeHMAC = HMACSHA256.authenticate(key: key, message: "no code was issued for this email")
    }

    static func normalize(email: String) -> String { email.trimmingCharacters(in: .whitespaces).lowercased() }

    private func digest(email: String, code: String) -> [UInt8] {
        HMACSHA256.authenticate(key: key, message: email + "\u{0}" + code)
    }

    static func randomCode() -> String {
        var generator = SystemRandomNumberGenerator()
        return String(format: "%06d", Int(generator.next(upperBound: UInt32(1_000_000))))
    }

    /// Issues a new code for `email` (already normalized), or throws RATE_LIMITED.
    /// Runs inside a write transaction. Returns the plain code for delivery. For an email of
    /// no user (`known` false) the same limits apply and nothing is stored.
    func issue(email: String, known: Bool, now: Date, _ tx: any Transaction) throws -> String {
        let hourAgo = now.addingTimeInterval(-3600)
        try tx.otps.forgetSends(email: email, through: hourAgo)
        let storedSends = try tx.otps.sendTimes(email: email)
        let sends = (known ? storedSends : unknownSends.withLock { table in
            table[email, default: []].filter { $0 > hourAgo }
        }).map(\.milliseconds)
        if let last = sends.last {
            let waitMilliseconds = last + Int64(rules.resendIntervalSeconds) * 1000 - now.milliseconds
            if waitMilliseconds > 0 {
                throw APIError.rateLimited(retryAfter: Int((waitMilliseconds + 999) / 1000),
                                           "a code was sent less than \(rules.resendIntervalSeconds) seconds ago; wait before asking again")
            }
        }
        if sends.count >= rules.sendsPerHour, let oldest = sends.first {
            let waitMilliseconds = oldest + 3_600_000 - now.milliseconds
            throw APIError.rateLimited(retryAfter: Int((waitMilliseconds + 999) / 1000),
                                       "at most \(rules.sendsPerHour) codes per email per hour; wait before asking again")
        }
        let code = Self.randomCode()
        let hmac = digest(email: email, code: code)
        guard known else {
            try tx.otps.countUnknownSend()
            unknownSends.withLock { table in
                if table[email] == nil, table.count >= Self.unknownSendsLimit {
                    table = table.filter { $0.value.contains { $0 > hourAgo } }
                    if table.count >= Self.unknownSendsLimit { table.removeAll() }
                }
                table[email] = table[email, default: []].filter { $0 > hourAgo } + [now]
            }
            return code
        }
        try tx.otps.replaceCode(email: email, hmac: hmac, expiresAt: now.addingTimeInterval(TimeInterval(rules.lifetimeSeconds)))
        try tx.otps.recordSend(email: email, at: now)
        devCodes?.withLock { $0[email] = code }
        return code
    }

    /// Whether `code` is the live code for `email`; consumes it on success and counts a wrong
    /// try otherwise. Runs inside a write transaction.
    ///
    /// Every failed try does the same work whether the email has a live code, a dead one or
    /// none: one HMAC of the code, one constant-time comparison (against a stand-in when no
    /// code exists) and one row written — the code's own wrong-try count, or else a single
    /// stand-in row under an email no one can have — so neither the answer nor the commit's
    /// cost says whether an email is known.
    func redeem(email: String, code: String, now: Date, _ otps: any OTPRepository) throws -> Bool {
        let computed = digest(email: email, code: code)
        let stored = try otps.code(email: email)
        let matches = compare(stored?.hmac ?? absentCodeHMAC, computed)
        guard let stored else {
            try otps.countWrongTry(email: Self.standInEmail)
            return false
        }
        let alive = !stored.used && stored.expiresAt.milliseconds > now.milliseconds && stored.wrongTries < rules.maxWrongTries
        guard alive && matches else {
            try otps.countWrongTry(email: email)
            return false
        }
        try otps.markUsed(email: email)
        devCodes?.withLock { _ = $0.removeValue(forKey: email) }
        return true
    }

    /// The key of the row a failed try for an email without a code writes to: empty, which no
    /// email the API accepts can be, so it is never asked for as a code.
    static let standInEmail = ""

    /// The last code issued for `email` (only with --dev; nil otherwise).
    func peek(email: String) -> String? { devCodes?.withLock { $0[email] } }
    var isDevMode: Bool { devCodes != nil }
}
