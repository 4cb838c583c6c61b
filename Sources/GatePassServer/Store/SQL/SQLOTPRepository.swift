import Foundation
import SQLBinding

struct SQLOTPRepository<Database: SQLRunner>: OTPRepository {
    let db: Database

    func forgetSends(email: String, through time: Date) throws {
        try db.execute("DELETE FROM otp_sends WHERE email = ? AND sent_at <= ?", [email, time.milliseconds])
    }

    func countUnknownSend() throws {
        try db.execute("UPDATE counters SET value = value + 1 WHERE name = 'otp_unknown_sends'")
    }

    func sendTimes(email: String) throws -> [Date] {
        try db.query("SELECT sent_at FROM otp_sends WHERE email = ? ORDER BY sent_at", [email]) { try $0.date(named: "sent_at") }
    }

    func recordSend(email: String, at time: Date) throws {
        try db.execute("INSERT INTO otp_sends (email, sent_at) VALUES (?, ?)", [email, time.milliseconds])
    }

    func replaceCode(email: String, hmac: [UInt8], expiresAt: Date) throws {
        try db.execute("""
            INSERT INTO otp_codes (email, code_hmac, expires_at, wrong_tries, used) VALUES (?, ?, ?, 0, 0)
            ON CONFLICT (email) DO UPDATE SET code_hmac = excluded.code_hmac, expires_at = excluded.expires_at,
                wrong_tries = 0, used = 0
            """, [email, hmac, expiresAt.milliseconds])
    }

    func code(email: String) throws -> StoredOneTimeCode? {
        try db.queryFirst("SELECT code_hmac, expires_at, wrong_tries, used FROM otp_codes WHERE email = ?", [email]) {
            // A negative count of wrong tries would grant more guesses than the limit allows.
            StoredOneTimeCode(hmac: try $0.blob(named: "code_hmac"), expiresAt: try $0.date(named: "expires_at"),
                              wrongTries: try $0.int(named: "wrong_tries", in: StoredCount.range), used: try $0.bool(named: "used"))
        }
    }

    func countWrongTry(email: String) throws -> Int {
        // One statement for both cases, so a try against a live code and one against the
        // stand-in row cost the same. A made row is already dead: used, expired, no code.
        try db.execute("""
            INSERT INTO otp_codes (email, code_hmac, expires_at, wrong_tries, used) VALUES (?, ?, 0, 1, 1)
            ON CONFLICT (email) DO UPDATE SET wrong_tries = otp_codes.wrong_tries + 1
            """, [email, [UInt8]()])
    }

    func markUsed(email: String) throws {
        try db.execute("UPDATE otp_codes SET used = 1 WHERE email = ?", [email])
    }

    func purge(sentBefore: Date, expiredBefore: Date) throws {
        try db.execute("DELETE FROM otp_sends WHERE sent_at < ?", [sentBefore.milliseconds])
        try db.execute("DELETE FROM otp_codes WHERE expires_at < ?", [expiredBefore.milliseconds])
    }
}
