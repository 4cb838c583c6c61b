import Foundation
import GatePassCore
import LoopbackHTTP
import SQLite
import Testing
@testable import GatePassServer

/// Issue 9, item 9: the smaller holes.
@Suite struct SmallerHolesTests {
    /// api.md: a token bound to a user of another organization answers 409 and stays where it is.
    @Test func aDeviceTokenOfAnotherOrganizationIsNotMoved() throws {
        try withSite { server, acme in
            let globex = try server.makeSite("Globex", domain: "globex.test")
            try server.registerDevice(acme.ownerToken, "shared-device-token")
            let stolen = try server.post("/api/visitors/devices/register", token: globex.ownerToken,
                                         ["token": "shared-device-token", "platform": "console"])
            #expect(stolen.isError(409, "CONFLICT"), "\(stolen.status) \(stolen.text)")
            let approver = try server.post("/api/approver/devices/register", token: globex.approverToken,
                                           ["token": "shared-device-token", "platform": "console"])
            #expect(approver.isError(409, "CONFLICT"))
            let owner = try server.store.readConnection { db in
                try db.queryFirst("SELECT user_id FROM devices WHERE token = 'shared-device-token'") { try $0.string(0) }
            }
            #expect(owner == acme.owner.id)
            // Within one organization the token is re-bound, as before.
            try server.registerDevice(acme.adminToken, "shared-device-token")
            let rebound = try server.store.readConnection { db in
                try db.queryFirst("SELECT user_id FROM devices WHERE token = 'shared-device-token'") { try $0.string(0) }
            }
            #expect(rebound == acme.admin.id)
        }
    }

    /// api.md: the fingerprint is method, path with its query, and body.
    @Test func theIdempotencyFingerprintIncludesTheQuery() throws {
        try withSite { server, site in
            let key = ["Idempotency-Key": "with-query"]
            let body: [String: Any] = ["name": "Query Person"]
            #expect(try server.post("/api/visitors?source=a", token: site.ownerToken, body, headers: key).status == 201)
            let other = try server.post("/api/visitors?source=b", token: site.ownerToken, body, headers: key)
            #expect(other.isError(422, "IDEMPOTENCY_KEY_REUSED"), "\(other.status) \(other.text)")
            let none = try server.post("/api/visitors", token: site.ownerToken, body, headers: key)
            #expect(none.isError(422, "IDEMPOTENCY_KEY_REUSED"))
            // A key, a value and their boundaries are all part of it.
            #expect(try server.post("/api/visitors?ab=c", token: site.ownerToken, body, headers: ["Idempotency-Key": "k2"]).status == 201)
            #expect(try server.post("/api/visitors?a=bc", token: site.ownerToken, body, headers: ["Idempotency-Key": "k2"])
                .isError(422, "IDEMPOTENCY_KEY_REUSED"))
            let replay = try server.post("/api/visitors?source=a", token: site.ownerToken, body, headers: key)
            #expect(replay.status == 201 && replay.headers["idempotent-replayed"] == "true")
        }
    }

    /// A login session's stream ends within a second of the session's expiry (the hub checks
    /// on its own tick against the injected clock; the bound here only catches a hang).
    @Test func aStreamEndsWhenItsSessionExpires() throws {
        try withSite(configure: { $0.tokenLifetimeSeconds = 3_600 }) { server, site in
            let token = try server.login(site.admin.email)
            let stream = try server.stream(token)
            #expect(stream.nextFrame(timeout: 0.5)?.isEvent != true)
            server.clock.advance(by: 3_601)
            let started = Date()
            while !stream.ended && Date().timeIntervalSince(started) < 30 { _ = stream.nextFrame(timeout: 0.5) }
            #expect(stream.ended, "the expired session's stream is still open")
            #expect(try server.get("/api/auth/me", token: token).status == 401)
        }
    }
}

/// Issue 9, item 9: verify-otp does the same work whether or not a code exists for the email.
/// Counted, not timed: every redeem computes one HMAC of the code and makes one constant-time
/// comparison of two 32-byte HMACs, for a live code, a wrong one, a used one and none at all.
@Suite struct OTPSameWorkTests {
    final class CountingComparator: Sendable {
        let calls = Locked<[(stored: Int, computed: Int)]>([])
        func compare(_ stored: [UInt8], _ computed: [UInt8]) -> Bool {
            calls.withLock { $0.append((stored.count, computed.count)) }
            return stored == computed
        }
        func take() -> [(stored: Int, computed: Int)] { calls.withLock { all in defer { all = [] }; return all } }
    }

    @Test func redeemComparesOnceWhetherOrNotACodeExists() throws {
        try withServer { server in
            let counter = CountingComparator()
            let otp = OneTimePasswords(rules: .init(lifetimeSeconds: 600, maxWrongTries: 5, sendsPerHour: 5, resendIntervalSeconds: 30),
                                       secret: ServerSecret(bytes: Array(repeating: 7, count: 32)), devMode: false,
                                       compare: { counter.compare($0, $1) })
            let now = server.clock.now()
            let code = try server.store.write { tx in try otp.issue(email: "known@acme.test", known: true, now: now, tx) }
            let wrong = code == "000000" ? "000001" : "000000"
            func redeem(_ email: String, _ code: String) throws -> (Bool, [(stored: Int, computed: Int)]) {
                let result = try server.store.write { tx in try otp.redeem(email: email, code: code, now: now, tx.otps) }
                return (result, counter.take())
            }
            let cases: [(String, String, Bool)] = [("nobody@acme.test", code, false), ("known@acme.test", wrong, false),
                                                   ("nobody@acme.test", wrong, false), ("known@acme.test", code, true),
                                                   ("known@acme.test", code, false)]
            for (email, attempt, expected) in cases {
                let (result, calls) = try redeem(email, attempt)
                #expect(result == expected, "\(email) \(attempt)")
                #expect(calls.count == 1, "\(email): \(calls.count) comparisons")
                #expect(calls.allSatisfy { $0.stored == 32 && $0.computed == 32 }, "\(email): \(calls)")
            }
        }
    }

    /// The OTP store as `redeem` sees it, recording each call and how many rows it changed:
    /// a failed try writes one row whether or not the email has a code, so the commit costs
    /// the same (a read-only transaction commits faster, which told unknown emails apart).
    final class RecordingOTPs: OTPRepository {
        let stored: any OTPRepository
        var calls: [String] = []
        init(_ stored: any OTPRepository) { self.stored = stored }
        func forgetSends(email: String, through time: Date) throws { calls.append("forgetSends"); try stored.forgetSends(email: email, through: time) }
        func sendTimes(email: String) throws -> [Date] { calls.append("sendTimes"); return try stored.sendTimes(email: email) }
        func recordSend(email: String, at time: Date) throws { calls.append("recordSend"); try stored.recordSend(email: email, at: time) }
        func replaceCode(email: String, hmac: [UInt8], expiresAt: Date) throws {
            calls.append("replaceCode"); try stored.replaceCode(email: email, hmac: hmac, expiresAt: expiresAt)
        }
        func code(email: String) throws -> StoredOneTimeCode? { calls.append("code"); return try stored.code(email: email) }
        func countWrongTry(email: String) throws -> Int {
            let changed = try stored.countWrongTry(email: email)
            calls.append("countWrongTry changed \(changed)")
            return changed
        }
        func markUsed(email: String) throws { calls.append("markUsed"); try stored.markUsed(email: email) }
        func countUnknownSend() throws { calls.append("countUnknownSend"); try stored.countUnknownSend() }
        func purge(sentBefore: Date, expiredBefore: Date) throws { calls.append("purge"); try stored.purge(sentBefore: sentBefore, expiredBefore: expiredBefore) }
    }

    @Test func aFailedTryWritesOneRowWhetherOrNotACodeExists() throws {
        try withServer { server in
            let otp = OneTimePasswords(rules: .init(lifetimeSeconds: 600, maxWrongTries: 5, sendsPerHour: 5, resendIntervalSeconds: 30),
                                       secret: ServerSecret(bytes: Array(repeating: 7, count: 32)), devMode: false)
            let now = server.clock.now()
            let code = try server.store.write { tx in try otp.issue(email: "known@acme.test", known: true, now: now, tx) }
            let spent = try server.store.write { tx in try otp.issue(email: "dead@acme.test", known: true, now: now, tx) }
            #expect(try server.store.write { tx in try otp.redeem(email: "dead@acme.test", code: spent, now: now, tx.otps) })
            let wrong = OTPTests.wrong(code)
            func failedTry(_ email: String, _ attempt: String) throws -> [String] {
                let (admitted, calls) = try server.store.write { tx throws -> (Bool, [String]) in
                    let recording = RecordingOTPs(tx.otps)
                    let admitted = try otp.redeem(email: email, code: attempt, now: now, recording)
                    return (admitted, recording.calls)
                }
                #expect(!admitted, "\(email) \(attempt)")
                return calls
            }
            let expected = ["code", "countWrongTry changed 1"]
            #expect(try failedTry("nobody@acme.test", code) == expected, "an unknown email")
            #expect(try failedTry("nobody@acme.test", wrong) == expected, "an unknown email, again")
            #expect(try failedTry("known@acme.test", wrong) == expected, "a wrong code")
            #expect(try failedTry("dead@acme.test", spent) == expected, "a used code")
            // Five wrong tries kill the code; the sixth, with the right code, is a failed try like any.
            for _ in 0..<4 { _ = try failedTry("known@acme.test", wrong) }
            #expect(try failedTry("known@acme.test", code) == expected, "a code past its wrong tries")
            // The stand-in row never grows the table: one row whatever the number of unknown emails.
            for index in 0..<20 { _ = try failedTry("stranger\(index)@acme.test", wrong) }
            let rows = try server.store.read { tx in try tx.otps.code(email: "stranger3@acme.test") }
            #expect(rows == nil, "an unknown email got a row")
        }
    }
}
