import Foundation
import GatePassCore
import GatePassCrypto
import LoopbackHTTP
import SQLite
import Testing
@testable import GatePassServer

/// The OTP login rules of api.md ("Auth"), tokens, logout and what the log may hold.
@Suite struct OTPTests {
    /// A code that is not `code` (the next one, wrapping).
    static func wrong(_ code: String) -> String { String(format: "%06d", (Int(code)! + 1) % 1_000_000) }

    func verify(_ server: TestServer, _ email: String, _ otp: String) throws -> HTTPAnswer {
        try server.post("/api/auth/verify-otp", ["email": email, "otp": otp])
    }

    @Test func loginAnswersRoleTokenExpiryAndProfile() throws {
        try withServer { server in
            let owner = try server.addUser("owner@acme.test", role: .owner, name: "Olga Owner")
            let code = try server.requestCode("owner@acme.test")
            #expect(code.count == 6 && code.allSatisfy { $0.isASCII && $0.isNumber })
            let answer = try verify(server, "OWNER@acme.test", code)
            #expect(answer.status == 200)
            #expect(answer.keys == ["role", "token", "expiresAt", "owner"])
            #expect(answer.string("role") == "OWNER")
            #expect(date(answer.json?["expiresAt"]) == server.clock.now().addingTimeInterval(12 * 3600))
            let profile = try #require(answer.json?["owner"] as? [String: Any])
            #expect(Set(profile.keys) == Shape.profile)
            #expect(profile["id"] as? String == owner.id && profile["email"] as? String == "owner@acme.test")
            #expect(profile["name"] as? String == "Olga Owner" && profile["organizationId"] as? String == owner.organizationId)
            // api.md: canScanCheckpoint is true for OWNER and ADMIN (this one was added without --can-scan).
            #expect(profile["role"] as? String == "OWNER" && profile["canScanCheckpoint"] as? Bool == true)
            let me = try server.get("/api/auth/me", token: answer.string("token"))
            #expect(me.status == 200 && me.keys == Shape.profile && me.string("id") == owner.id)
        }
    }

    @Test(arguments: [(Role.admin, "admin"), (.approver, "approver"), (.platformAdmin, "platformAdmin"), (.host, "host")])
    func profileSitsUnderTheRolesKey(_ role: Role, _ key: String) throws {
        try withServer { server in
            try server.addUser("user@acme.test", role: role, canScan: role == .approver)
            let answer = try server.loginAnswer("user@acme.test")
            #expect(Set(answer.keys) == ["role", "token", "expiresAt", key])
            #expect(answer["role"] as? String == role.rawValue)
            #expect((answer[key] as? [String: Any])?["canScanCheckpoint"] as? Bool == (role == .approver || role == .admin))
        }
    }

    @Test func codesAreSixDigitsAndVary() throws {
        try withServer { server in
            var codes: Set<String> = []
            for index in 0..<8 {
                // Codes exist for users only (an unknown email gets none).
                try server.addUser("person\(index)@acme.test", role: .host)
                let code = try server.requestCode("person\(index)@acme.test")
                #expect(code.utf8.count == 6 && code.allSatisfy { ("0"..."9").contains($0) })
                codes.insert(code)
            }
            #expect(codes.count > 1)
        }
    }

    @Test func aCodeExpiresAfterTenMinutes() throws {
        try withServer { server in
            try server.addUser("late@acme.test", role: .owner)
            try server.addUser("ontime@acme.test", role: .owner)
            let late = try server.requestCode("late@acme.test")
            server.clock.advance(by: 600)
            #expect(try verify(server, "late@acme.test", late).isError(401, "UNAUTHORIZED"))
            let onTime = try server.requestCode("ontime@acme.test")
            server.clock.advance(by: 599)
            #expect(try verify(server, "ontime@acme.test", onTime).status == 200)
        }
    }

    @Test func aCodeIsSingleUse() throws {
        try withServer { server in
            try server.addUser("once@acme.test", role: .owner)
            let code = try server.requestCode("once@acme.test")
            #expect(try verify(server, "once@acme.test", code).status == 200)
            #expect(try verify(server, "once@acme.test", code).isError(401, "UNAUTHORIZED"))
        }
    }

    @Test func aNewCodeReplacesTheOld() throws {
        try withServer { server in
            try server.addUser("twice@acme.test", role: .owner)
            let first = try server.requestCode("twice@acme.test")
            server.clock.advance(by: 30)
            let second = try server.requestCode("twice@acme.test")
            if first != second { // one chance in a million that both draws are equal
                #expect(try verify(server, "twice@acme.test", first).isError(401, "UNAUTHORIZED"))
            }
            #expect(try verify(server, "twice@acme.test", second).status == 200)
        }
    }

    @Test func fiveWrongTriesKillTheCode() throws {
        try withServer { server in
            try server.addUser("guess@acme.test", role: .owner)
            let code = try server.requestCode("guess@acme.test")
            for _ in 0..<5 { #expect(try verify(server, "guess@acme.test", Self.wrong(code)).isError(401, "UNAUTHORIZED")) }
            #expect(try verify(server, "guess@acme.test", code).isError(401, "UNAUTHORIZED"))
            // A fresh code works again.
            server.clock.advance(by: 30)
            #expect(try verify(server, "guess@acme.test", try server.requestCode("guess@acme.test")).status == 200)
        }
    }

    @Test func fourWrongTriesLeaveTheCodeAlive() throws {
        try withServer { server in
            try server.addUser("guess@acme.test", role: .owner)
            let code = try server.requestCode("guess@acme.test")
            for _ in 0..<4 { #expect(try verify(server, "guess@acme.test", Self.wrong(code)).status == 401) }
            #expect(try verify(server, "guess@acme.test", code).status == 200)
        }
    }

    @Test func resendThrottleIsOnePerThirtySeconds() throws {
        try withServer { server in
            let email = ["email": "slow@acme.test"]
            #expect(try server.post("/api/auth/send-otp", email).status == 202)
            let early = try server.post("/api/auth/send-otp", email)
            #expect(early.isError(429, "RATE_LIMITED"))
            #expect(early.headers["retry-after"] == "30")
            server.clock.advance(by: 29)
            let stillEarly = try server.post("/api/auth/send-otp", email)
            #expect(stillEarly.isError(429, "RATE_LIMITED") && stillEarly.headers["retry-after"] == "1")
            server.clock.advance(by: 1)
            #expect(try server.post("/api/auth/send-otp", email).status == 202)
        }
    }

    @Test func atMostFiveSendsPerHour() throws {
        try withServer { server in
            let email = ["email": "chatty@acme.test"]
            for _ in 0..<5 {
                #expect(try server.post("/api/auth/send-otp", email).status == 202)
                server.clock.advance(by: 30)
            }
            // 150 s after the first send: the sixth waits until the first is an hour old.
            let sixth = try server.post("/api/auth/send-otp", email)
            #expect(sixth.isError(429, "RATE_LIMITED"))
            #expect(sixth.headers["retry-after"] == String(3600 - 150))
            server.clock.advance(by: 3600 - 150 - 1)
            #expect(try server.post("/api/auth/send-otp", email).status == 429)
            server.clock.advance(by: 1)
            #expect(try server.post("/api/auth/send-otp", email).status == 202)
            // Other emails are not limited by this one.
            #expect(try server.post("/api/auth/send-otp", ["email": "quiet@acme.test"]).status == 202)
        }
    }

    @Test func unknownEmailsGetTheSameAnswerAndCountAgainstTheLimits() throws {
        try withServer { server in
            try server.addUser("known@acme.test", role: .owner)
            let known = try server.post("/api/auth/send-otp", ["email": "known@acme.test"])
            let unknown = try server.post("/api/auth/send-otp", ["email": "stranger@acme.test"])
            #expect(known.status == 202 && unknown.status == 202)
            #expect(known.body == unknown.body)
            #expect(NSDictionary(dictionary: known.json ?? [:]) == NSDictionary(dictionary: unknown.json ?? [:]))
            #expect(known.json?["sent"] as? Bool == true && known.keys == ["sent"])
            #expect(known.headers["content-type"] == unknown.headers["content-type"])
            let knownAgain = try server.post("/api/auth/send-otp", ["email": "known@acme.test"])
            let unknownAgain = try server.post("/api/auth/send-otp", ["email": "stranger@acme.test"])
            #expect(knownAgain.isError(429, "RATE_LIMITED") && unknownAgain.isError(429, "RATE_LIMITED"))
            #expect(NSDictionary(dictionary: knownAgain.json ?? [:]) == NSDictionary(dictionary: unknownAgain.json ?? [:]))
            #expect(knownAgain.headers["retry-after"] == unknownAgain.headers["retry-after"])
            // An unknown email has no code: nothing can log anyone in with it.
            server.clock.advance(by: 30)
            #expect(try server.post("/api/auth/send-otp", ["email": "stranger@acme.test"]).status == 202)
            #expect(try server.get("/api/auth/dev-peek-otp?email=stranger@acme.test").isError(404, "NOT_FOUND"))
            #expect(try verify(server, "stranger@acme.test", "123456").isError(401, "UNAUTHORIZED"))
        }
    }

    /// Unauthenticated `send-otp` cannot grow the database: an email of no user gets the same
    /// answer and limits, but no code and no send row (one fixed counter row counts them).
    @Test func unknownEmailsStoreNothing() throws {
        try withServer { server in
            try server.addUser("known@acme.test", role: .owner)
            for index in 0..<40 {
                #expect(try server.post("/api/auth/send-otp", ["email": "stranger\(index)@acme.test"]).status == 202)
            }
            #expect(try server.post("/api/auth/send-otp", ["email": "known@acme.test"]).status == 202)
            let database = try Connection(path: server.directory + "/gatepass.db")
            #expect(try database.scalarInt("SELECT COUNT(*) FROM otp_codes") == 1)
            #expect(try database.scalarInt("SELECT COUNT(*) FROM otp_sends") == 1)
            #expect(try database.scalarInt("SELECT value FROM counters WHERE name = 'otp_unknown_sends'") == 40)
        }
    }

    @Test(arguments: ["not-an-email", "", "   ", "a@b", "@acme.test", "two@@acme.test", "sp ace@acme.test"])
    func malformedEmailIsABadRequestNamingEmail(_ email: String) throws {
        try withServer { server in
            let sent = try server.post("/api/auth/send-otp", ["email": email])
            #expect(sent.isError(400, "BAD_REQUEST"), "\(sent.text)")
            #expect(sent.errorMessage.contains("email"))
            let verified = try server.post("/api/auth/verify-otp", ["email": email, "otp": "123456"])
            #expect(verified.isError(400, "BAD_REQUEST") && verified.errorMessage.contains("email"))
        }
    }

    @Test func devPeekIsNotFoundWithoutDevMode() throws {
        try withServer(devMode: false) { server in
            try server.addUser("owner@acme.test", role: .owner)
            #expect(try server.post("/api/auth/send-otp", ["email": "owner@acme.test"]).status == 202)
            let peek = try server.get("/api/auth/dev-peek-otp?email=owner@acme.test")
            #expect(peek.isError(404, "NOT_FOUND"))
            #expect(peek.json?["otp"] == nil)
        }
    }

    /// Without dev mode the code reaches only the delivery program, never the log; no log line
    /// ever holds a token (login or scanner) in either mode.
    @Test func codesAndTokensNeverReachTheLog() throws {
        let outbox = FileManager.default.temporaryDirectory.appendingPathComponent("gatepass-otp-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: outbox, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: outbox) }
        let script = outbox + "/deliver.sh"
        try "#!/bin/sh\ncat > \"\(outbox)/$1.tmp\" && mv \"\(outbox)/$1.tmp\" \"\(outbox)/$1\"\n"
            .write(toFile: script, atomically: true, encoding: .utf8)
        chmod(script, 0o755)
        try withServer(devMode: false, configure: { $0.otpDeliveryCommand = script }) { server in
            try server.addUser("owner@acme.test", role: .owner)
            #expect(try server.post("/api/auth/send-otp", ["email": "owner@acme.test"]).status == 202)
            let delivered = outbox + "/owner@acme.test"
            // The delivery program is another process: its file appearing is the signal.
            #expect(eventually { FileManager.default.fileExists(atPath: delivered) })
            let code = try String(contentsOfFile: delivered, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
            #expect(code.count == 6)
            let answer = try verify(server, "owner@acme.test", code)
            #expect(answer.status == 200)
            let token = try #require(answer.string("token"))
            let scanner = try server.scannerToken(token)
            #expect(try server.get("/api/auth/me", token: token).status == 200)
            #expect(try server.get("/api/visitor-scanner/stats", token: scanner).status == 200)
            #expect(try server.post("/api/auth/logout", token: token).status == 204)
            let lines = server.log.all
            #expect(lines.count >= 6)
            for line in lines {
                #expect(!line.contains(code), "the code is in: \(line)")
                #expect(!line.contains(token) && !line.contains(scanner), "a token is in: \(line)")
                #expect(!line.contains("owner@acme.test"), "an email is in: \(line)")
            }
        }
        // With dev mode, tokens still stay out of the log.
        try withSite { server, site in
            _ = try server.createVisitor(site.ownerToken)
            let tokens = [site.ownerToken, site.adminToken, site.approverToken, site.deskToken, site.scanner]
            for line in server.log.all {
                for token in tokens { #expect(!line.contains(token), "a token is in: \(line)") }
                // Signatures alone are secret enough to leak a token.
                for token in tokens { #expect(!line.contains(String(token.split(separator: ".").last!))) }
            }
        }
    }

    @Test func logoutEndsTheSessionAndItsScannerTokensOnly() throws {
        try withServer { server in
            try server.addUser("owner@acme.test", role: .owner)
            let first = try server.login("owner@acme.test")
            let second = try server.login("owner@acme.test")
            let firstScanners = [try server.scannerToken(first), try server.scannerToken(first)]
            let secondScanner = try server.scannerToken(second)
            #expect(try server.post("/api/auth/logout", token: first).status == 204)
            #expect(try server.get("/api/auth/me", token: first).isError(401, "UNAUTHORIZED"))
            #expect(try server.post("/api/auth/logout", token: first).isError(401, "UNAUTHORIZED"))
            for scanner in firstScanners {
                #expect(try server.get("/api/visitor-scanner/stats", token: scanner).isError(401, "UNAUTHORIZED"))
                #expect(try server.checkIn(scanner, "K7Q2M9XD").isError(401, "UNAUTHORIZED"))
            }
            #expect(try server.get("/api/auth/me", token: second).status == 200)
            #expect(try server.get("/api/visitor-scanner/stats", token: secondScanner).status == 200)
            #expect(try server.createVisitor(second)["status"] as? String == "EXPECTED")
        }
    }

    @Test func loginTokensLiveTwelveHoursAndScannerTokensThirtyDays() throws {
        try withServer { server in
            try server.addUser("owner@acme.test", role: .owner)
            let answer = try server.loginAnswer("owner@acme.test")
            let token = try #require(answer["token"] as? String)
            let expiresAt = try #require(date(answer["expiresAt"]))
            let scanner = try server.scannerTokenAnswer(token)
            let scannerToken = try #require(scanner["scannerToken"] as? String)
            let scannerExpiry = try #require(date(scanner["expiresAt"]))
            #expect(scannerExpiry == server.clock.now().addingTimeInterval(30 * 86_400))
            server.clock.set(expiresAt.addingTimeInterval(-1))
            #expect(try server.get("/api/auth/me", token: token).status == 200)
            server.clock.set(expiresAt)
            #expect(try server.get("/api/auth/me", token: token).isError(401, "UNAUTHORIZED"))
            // The scanner token lives on its own 30 days.
            #expect(try server.get("/api/visitor-scanner/stats", token: scannerToken).status == 200)
            server.clock.set(scannerExpiry.addingTimeInterval(-1))
            #expect(try server.get("/api/visitor-scanner/stats", token: scannerToken).status == 200)
            server.clock.set(scannerExpiry)
            #expect(try server.get("/api/visitor-scanner/stats", token: scannerToken).isError(401, "UNAUTHORIZED"))
        }
    }

    @Test(arguments: ["Basic b3duZXI6cHc=", "Bearer", "Bearer ", "Bearer not-a-token", "bearer gp1.e30.AAAA", "Token abc"])
    func badAuthorizationHeadersAreUnauthorized(_ header: String) throws {
        try withServer { server in
            let answer = try server.get("/api/auth/me", headers: ["Authorization": header])
            #expect(answer.isError(401, "UNAUTHORIZED"))
        }
    }

    /// A token whose payload was edited keeps its old signature and is refused.
    @Test func aTamperedTokenIsRefused() throws {
        try withServer { server in
            try server.addUser("owner@acme.test", role: .owner)
            let token = try server.login("owner@acme.test")
            let parts = token.split(separator: ".").map(String.init)
            #expect(parts.count == 3)
            let payload = String(decoding: Base64URL.decode(parts[1]) ?? [], as: UTF8.self)
            let pieces = payload.split(separator: ":").map(String.init)
            #expect(pieces.count == 3)
            let longer = pieces[0] + ":" + pieces[1] + ":" + String(Int64(pieces[2])! + 86_400 * 365)
            let forged = parts[0] + "." + Base64URL.encode(Array(longer.utf8)) + "." + parts[2]
            #expect(try server.get("/api/auth/me", token: forged).isError(401, "UNAUTHORIZED"))
            #expect(try server.get("/api/auth/me", token: token).status == 200)
        }
    }

    /// Codes are kept only as an HMAC; the signing secret sits beside the database, owner-only.
    @Test func codesAreStoredHashedAndTheSecretIsPrivate() throws {
        try withServer { server in
            try server.addUser("owner@acme.test", role: .owner)
            let code = try server.requestCode("owner@acme.test")
            let peek = try server.get("/api/auth/dev-peek-otp?email=owner@acme.test")
            #expect(peek.keys == ["otp"])
            let stored = try server.store.readConnection { db in
                // Every column as text (rows are read strictly by type, so cast them), and the HMAC's bytes.
                try db.query("""
                    SELECT CAST(email AS TEXT), CAST(expires_at AS TEXT), CAST(wrong_tries AS TEXT), CAST(used AS TEXT),
                           code_hmac FROM otp_codes
                    """, []) { row in try (0..<4).map { try row.string(Int32($0)) } + [String(decoding: try row.blob(4), as: UTF8.self)] }
            }
            #expect(stored.count == 1)
            for value in stored.flatMap({ $0 }) { #expect(!value.contains(code)) }
            let hmac = try server.store.readConnection { db in try db.queryFirst("SELECT code_hmac FROM otp_codes", []) { try $0.blob(0) } }
            #expect(hmac?.count == 32)
            var info = stat()
            #expect(stat(server.directory + "/gatepass.db.secret", &info) == 0)
            #expect(info.st_mode & 0o777 == 0o600)
            #expect(stat(server.directory + "/gatepass.db", &info) == 0 && info.st_mode & 0o077 == 0)
        }
    }

    /// A token signed by another server (another secret) is refused.
    @Test func tokensOfAnotherServerAreRefused() throws {
        try withServer { first in
            try first.addUser("owner@acme.test", role: .owner)
            let token = try first.login("owner@acme.test")
            try withServer { second in
                try second.addUser("owner@acme.test", role: .owner)
                #expect(try second.get("/api/auth/me", token: token).isError(401, "UNAUTHORIZED"))
            }
            #expect(try first.get("/api/auth/me", token: token).status == 200)
        }
    }

    @Test func otpMustBeSixDigits() throws {
        try withServer { server in
            try server.addUser("owner@acme.test", role: .owner)
            let code = try server.requestCode("owner@acme.test")
            for bad in ["12345", "1234567", "abcdef", ""] {
                let answer = try verify(server, "owner@acme.test", bad)
                #expect(answer.isError(400, "BAD_REQUEST") && answer.errorMessage.contains("otp"), "\(bad)")
            }
            // Malformed codes are not wrong tries.
            #expect(try verify(server, "owner@acme.test", code).status == 200)
        }
    }
}
