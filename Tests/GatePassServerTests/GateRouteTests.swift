import Foundation
import GatePassCore
import LoopbackHTTP
import Testing
@testable import GatePassServer

extension TestServer {
    /// A checkpoint made through the API as `token` (OWNER/ADMIN); its id.
    func addCheckpoint(_ name: String, token: String) throws -> String {
        let answer = try post("/api/checkpoints", token: token, ["name": name])
        guard answer.status == 201, let id = answer.string("id") else {
            throw TestFailure("create checkpoint answered \(answer.status): \(answer.text)")
        }
        return id
    }

    /// An enrolment code for a kiosk at `checkpointId`, made as `token`.
    func enrolmentCode(_ checkpointId: String, token: String, name: String = "North door kiosk") throws -> String {
        let answer = try post("/api/admin/kiosks", token: token, ["checkpointId": checkpointId, "name": name])
        guard answer.status == 201, let code = answer.string("enrolmentCode") else {
            throw TestFailure("kiosks answered \(answer.status): \(answer.text)")
        }
        return code
    }

    /// Enrols a kiosk with `code`; its scanner token.
    func enrol(_ code: String) throws -> String {
        let answer = try post("/api/visitor-scanner/enrol", ["enrolmentCode": code])
        guard answer.status == 201, let token = answer.string("scannerToken") else {
            throw TestFailure("enrol answered \(answer.status): \(answer.text)")
        }
        return token
    }

    /// The audit entries of `action`, oldest first.
    func auditEntries(_ action: AuditAction) throws -> [AuditEntry] {
        try store.read { tx in try tx.audit.entries(after: 0, limit: 10_000) }.map(\.entry).filter { $0.action == action.rawValue }
    }

    /// The scanner tokens an admin lists.
    func scannerTokens(_ token: String) throws -> [[String: Any]] {
        let answer = try get("/api/admin/scanner-tokens?limit=500", token: token)
        guard answer.status == 200 else { throw TestFailure("scanner-tokens answered \(answer.status): \(answer.text)") }
        return answer.items
    }
}

/// api.md "Users, checkpoints, scanner tokens": checkpoints renamed and retired, scanner
/// tokens listed and revoked, kiosks enrolled with a one-time code.
@Suite struct GateRouteTests {
    // MARK: - Checkpoints

    @Test func renameAndRetireACheckpoint() throws {
        try withSite { server, site in
            let north = try server.addCheckpoint("North door", token: site.adminToken)
            let renamed = try server.patch("/api/checkpoints/\(north)", token: site.adminToken, ["name": "  North gate "])
            #expect(renamed.status == 200 && renamed.string("name") == "North gate", "\(renamed.text)")
            #expect(renamed.json?["retired"] as? Bool == false)
            // Another checkpoint's name is taken; the same name again is no change.
            #expect(try server.patch("/api/checkpoints/\(north)", token: site.adminToken, ["name": "Main gate"]).isError(409, "CONFLICT"))
            #expect(try server.patch("/api/checkpoints/\(north)", token: site.adminToken, ["name": "North gate"]).status == 200)

            let retired = try server.patch("/api/checkpoints/\(north)", token: site.ownerToken, ["retired": true])
            #expect(retired.status == 200 && retired.json?["retired"] as? Bool == true, "\(retired.text)")
            let listed = try server.get("/api/checkpoints", token: site.approverToken).items
            #expect(listed.first { $0["id"] as? String == north }?["retired"] as? Bool == true)
            // No new tokens or enrolments at a retired gate.
            #expect(try server.post("/api/visitor-scanner/token", token: site.ownerToken, ["checkpointId": north]).isError(409, "CONFLICT"))
            #expect(try server.post("/api/admin/kiosks", token: site.ownerToken,
                                    ["checkpointId": north, "name": "K"]).isError(409, "CONFLICT"))
            // The default checkpoint stays.
            let main = try server.patch("/api/checkpoints/\(site.mainGate)", token: site.ownerToken, ["retired": true])
            #expect(main.isError(409, "CONFLICT") && main.errorMessage.contains("default"), "\(main.text)")
            // Brought back, it issues tokens again.
            #expect(try server.patch("/api/checkpoints/\(north)", token: site.ownerToken, ["retired": false]).json?["retired"] as? Bool == false)
            #expect(try server.scannerToken(site.ownerToken, checkpointId: north).hasPrefix("gp1."))

            let entries = try server.auditEntries(.checkpointUpdate)
            #expect(entries.count == 3, "one entry per change, none for refusals or no-ops: \(entries)")
            #expect(entries.first?.before == #"{"name":"North door"}"# && entries.first?.after == #"{"name":"North gate"}"#)
            #expect(entries[1].before == #"{"retired":false}"# && entries[1].after == #"{"retired":true}"#)
            #expect(entries.allSatisfy { $0.actorKind == .user && $0.entityId == north })
        }
    }

    @Test func retiringEndsTheGatesTokensAndStreamsWithRevoked() throws {
        try withSite { server, site in
            let north = try server.addCheckpoint("North door", token: site.adminToken)
            let personal = try server.scannerToken(site.approverToken, checkpointId: north)
            let kiosk = try server.enrol(try server.enrolmentCode(north, token: site.adminToken))
            let atMain = try server.scannerToken(site.approverToken)
            let stream = try server.stream(kiosk)
            let hub = server.server.application.eventHub
            #expect(hub.changes.wait { hub.streamCount == 1 })

            #expect(try server.patch("/api/checkpoints/\(north)", token: site.adminToken, ["retired": true]).status == 200)
            #expect(stream.nextFrame(timeout: 10) == nil && stream.ended)
            for token in [personal, kiosk] {
                let refused = try server.get("/api/visitor-scanner/stats", token: token)
                #expect(refused.isError(401, "REVOKED") && refused.errorMessage.contains("retired"), "\(refused.text)")
            }
            #expect(try server.get("/api/visitor-scanner/stats", token: atMain).status == 200, "another gate's token goes on")
            // Revoked tokens are no longer listed.
            let listed = Set(try server.scannerTokens(site.adminToken).compactMap { $0["checkpointId"] as? String })
            #expect(!listed.contains(north))
        }
    }

    @Test func checkpointPatchRefusesBadBodiesAndOtherOrganizations() throws {
        try withSite { server, site in
            let north = try server.addCheckpoint("North door", token: site.adminToken)
            let path = "/api/checkpoints/\(north)"
            for body in [["name": ""], ["name": String(repeating: "n", count: 101)], ["name": 7], ["retired": "yes"],
                         ["name": "A\u{0}B"]] as [[String: Any]] {
                #expect(try server.patch(path, token: site.adminToken, body).isError(400, "BAD_REQUEST"), "\(body)")
            }
            let json = ["Content-Type": "application/json", "Authorization": "Bearer \(site.adminToken)"]
            let malformed = try server.client().send("PATCH", path, headers: json, body: Array("{\"name\":".utf8))
            #expect(malformed.status == 400)
            let huge = try server.client().send("PATCH", path, headers: json, body: Array("{\"name\":\"\(String(repeating: "x", count: 70_000))\"}".utf8))
            #expect(huge.status == 413)
            #expect(try server.patch("/api/checkpoints/nope", token: site.adminToken, ["name": "X"]).isError(404, "NOT_FOUND"))
            let other = try server.makeSite("Globex", domain: "globex.test")
            #expect(try server.patch(path, token: other.ownerToken, ["retired": true]).isError(404, "NOT_FOUND"))
            #expect(try server.get("/api/checkpoints", token: site.adminToken).items.first { $0["id"] as? String == north }?["name"] as? String == "North door")
            #expect(try server.auditEntries(.checkpointUpdate).isEmpty)
        }
    }

    // MARK: - Scanner tokens

    @Test func theTokenListShowsLastUseRecordedAtMostOnceAMinute() throws {
        try withSite { server, site in
            let token = try server.scannerToken(site.approverToken)
            func listed() throws -> [String: Any]? {
                try server.scannerTokens(site.ownerToken).first { $0["createdBy"] as? String == site.approver.id }
            }
            let entry = try #require(try listed())
            #expect(Set(entry.keys).isSuperset(of: ["id", "checkpointId", "createdBy", "createdAt", "expiresAt", "lastUsedAt"]))
            #expect(entry["checkpointId"] as? String == site.mainGate && entry["lastUsedAt"] is NSNull)
            let firstUse = server.clock.now()
            #expect(try server.get("/api/visitor-scanner/on-site", token: token).status == 200)
            try writesSubmittedSoFarCommitted(server)
            #expect(try listed()?["lastUsedAt"] as? String == Timestamp(firstUse).description)
            // Within the minute nothing is written; after it, the next use is.
            server.clock.advance(by: 30)
            #expect(try server.get("/api/visitor-scanner/on-site", token: token).status == 200)
            try writesSubmittedSoFarCommitted(server)
            #expect(try listed()?["lastUsedAt"] as? String == Timestamp(firstUse).description)
            server.clock.advance(by: 31)
            let laterUse = server.clock.now()
            #expect(try server.get("/api/visitor-scanner/on-site", token: token).status == 200)
            try writesSubmittedSoFarCommitted(server)
            #expect(try listed()?["lastUsedAt"] as? String == Timestamp(laterUse).description)
            // Only OWNER/ADMIN, and only their own organization's tokens.
            #expect(try server.get("/api/admin/scanner-tokens", token: site.approverToken).isError(403, "FORBIDDEN"))
            let other = try server.makeSite("Globex", domain: "globex.test")
            #expect(try server.scannerTokens(other.ownerToken).allSatisfy { $0["checkpointId"] as? String == other.mainGate })
        }
    }

    /// The last use is written off the request, in the writer's queue: a write submitted after
    /// it returns once it has committed (the queue is first in, first out).
    private func writesSubmittedSoFarCommitted(_ server: TestServer) throws {
        _ = try server.store.write { _ in 0 }
    }

    @Test func aRevokedTokenAnswersRevokedAndItsStreamEnds() throws {
        try withSite { server, site in
            let token = try server.scannerToken(site.approverToken)
            let id = try #require(try server.scannerTokens(site.ownerToken).first { $0["createdBy"] as? String == site.approver.id }?["id"] as? String)
            let stream = try server.stream(token)
            let hub = server.server.application.eventHub
            #expect(hub.changes.wait { hub.streamCount == 1 })
            let other = try server.makeSite("Globex", domain: "globex.test")
            #expect(try server.post("/api/admin/scanner-tokens/\(id)/revoke", token: other.ownerToken).isError(404, "NOT_FOUND"))
            #expect(try server.post("/api/admin/scanner-tokens/\(id)/revoke", token: site.approverToken).isError(403, "FORBIDDEN"))

            let revoked = try server.post("/api/admin/scanner-tokens/\(id)/revoke", token: site.adminToken)
            #expect(revoked.status == 204 && revoked.body.isEmpty)
            #expect(stream.nextFrame(timeout: 10) == nil && stream.ended)
            let refused = try server.get("/api/visitor-scanner/on-site", token: token)
            #expect(refused.isError(401, "REVOKED") && refused.errorMessage.contains("signed out by an admin"), "\(refused.text)")
            #expect(try server.checkIn(token, "ABCD1234").isError(401, "REVOKED"))
            #expect(try server.post("/api/admin/scanner-tokens/\(id)/revoke", token: site.adminToken).isError(404, "NOT_FOUND"))
            // The person's login goes on (api.md: to stop it too, disable the user).
            #expect(try server.get("/api/auth/me", token: site.approverToken).status == 200)
            // A logout ends a token with the plain 401: it was not an admin's doing.
            let second = try server.scannerToken(site.approverToken)
            #expect(try server.post("/api/auth/logout", token: site.approverToken).status == 204)
            #expect(try server.get("/api/visitor-scanner/on-site", token: second).isError(401, "UNAUTHORIZED"))
            let entries = try server.auditEntries(.scannerTokenRevoke)
            #expect(entries.count == 1 && entries.first?.entityId == id && entries.first?.actorId == site.admin.id)
        }
    }

    // MARK: - Kiosks

    @Test func aKioskEnrolsOnceAndIsBoundToTheGateNotToAPerson() throws {
        try withSite { server, site in
            let north = try server.addCheckpoint("North door", token: site.adminToken)
            let made = try server.post("/api/admin/kiosks", token: site.adminToken, ["checkpointId": north, "name": "North kiosk"])
            #expect(made.status == 201 && made.keys == ["id", "enrolmentCode", "expiresAt"], "\(made.text)")
            let code = try #require(made.string("enrolmentCode"))
            #expect(code.count == 14 && code.filter { $0 == "-" }.count == 2)
            #expect(made.string("expiresAt") == Timestamp(server.clock.now().addingTimeInterval(600)).description)
            // The code is stored only as an HMAC.
            let stored = try server.store.read { tx in try tx.kiosks.find(codeHash: Array(code.utf8)) }
            #expect(stored == nil)

            // Typed in lower case with spaces, it still matches.
            let enrolled = try server.post("/api/visitor-scanner/enrol", ["enrolmentCode": code.lowercased().replacingOccurrences(of: "-", with: " ")])
            #expect(enrolled.status == 201 && enrolled.keys == ["scannerToken", "checkpoint", "expiresAt"], "\(enrolled.text)")
            let kiosk = try #require(enrolled.string("scannerToken"))
            #expect((enrolled.json?["checkpoint"] as? [String: Any])?["name"] as? String == "North door")
            #expect(enrolled.string("expiresAt") == Timestamp(server.clock.now().addingTimeInterval(365 * 86_400)).description)
            #expect(try server.post("/api/visitor-scanner/enrol", ["enrolmentCode": code]).isError(401, "UNAUTHORIZED"), "used once only")

            // It scans; its check-in is audited as the kiosk's.
            let visitor = try server.createVisitor(site.ownerToken)
            let checkedIn = try server.checkIn(kiosk, visitor["shortId"] as? String ?? "")
            #expect(checkedIn.string("result") == "CHECKED_IN", "\(checkedIn.text)")
            let kioskId = try #require(made.string("id"))
            let checkIns = try server.auditEntries(.visitorCheckIn)
            #expect(checkIns.last?.actorKind == .kiosk && checkIns.last?.actorId == kioskId)
            #expect(try server.auditEntries(.kioskCreate).map(\.actorId) == [site.admin.id])
            let enrolEntries = try server.auditEntries(.kioskEnrol)
            #expect(enrolEntries.count == 1 && enrolEntries.first?.actorKind == .kiosk && enrolEntries.first?.entityId == kioskId)

            // Listed like any scanner token, with its name.
            let listed = try server.scannerTokens(site.ownerToken).first { $0["kioskName"] as? String == "North kiosk" }
            #expect(listed?["checkpointId"] as? String == north && listed?["createdBy"] as? String == site.admin.id)

            // The admin who made the code logs out, then is disabled: the gate goes on.
            #expect(try server.post("/api/auth/logout", token: site.adminToken).status == 204)
            #expect(try server.patch("/api/users/\(site.admin.id)", token: site.ownerToken, ["disabled": true]).status == 200)
            #expect(try server.get("/api/visitor-scanner/stats", token: kiosk).status == 200)
            let stream = try server.stream(kiosk)
            #expect(!stream.ended)

            // Revoked like any scanner token.
            let id = try #require(listed?["id"] as? String)
            #expect(try server.post("/api/admin/scanner-tokens/\(id)/revoke", token: site.ownerToken).status == 204)
            #expect(try server.get("/api/visitor-scanner/stats", token: kiosk).isError(401, "REVOKED"))
            #expect(stream.nextFrame(timeout: 10) == nil && stream.ended)
        }
    }

    @Test func anExpiredWrongOrHostileCodeIsRefusedAndWrongCodesAreThrottled() throws {
        try withSite { server, site in
            let code = try server.enrolmentCode(site.mainGate, token: site.ownerToken)
            server.clock.advance(by: 601)
            #expect(try server.post("/api/visitor-scanner/enrol", ["enrolmentCode": code]).isError(401, "UNAUTHORIZED"))
            // Missing or not text: the field is named.
            for body in [[:], ["enrolmentCode": 12], ["enrolmentCode": NSNull()]] as [[String: Any]] {
                let answer = try server.post("/api/visitor-scanner/enrol", body)
                #expect(answer.isError(400, "BAD_REQUEST") && answer.errorMessage.contains("enrolmentCode"), "\(answer.text)")
            }
            #expect(try server.postRaw("/api/visitor-scanner/enrol", body: Array("{\"enrolmentCode\":".utf8)).status == 400)
            let oversized = "{\"enrolmentCode\":\"\(String(repeating: "A", count: 70_000))\"}"
            #expect(try server.postRaw("/api/visitor-scanner/enrol", body: Array(oversized.utf8)).status == 413)
            // The throttle counts every wrong code; the expired one above was the first.
            server.clock.set(Date(timeIntervalSince1970: (server.clock.now().timeIntervalSince1970 / 60).rounded(.down) * 60 + 60))
            let hostile = ["AAAA-AAAA-AAAA", "' OR 1=1 --", "\u{202E}ABCD-EFGH-JKMN", String(repeating: "Z", count: 5000), "ÅÅÅÅ-ÅÅÅÅ-ÅÅÅÅ"]
            for index in 0..<10 {
                let answer = try server.post("/api/visitor-scanner/enrol", ["enrolmentCode": hostile[index % hostile.count]])
                #expect(answer.isError(401, "UNAUTHORIZED"), "\(index): \(answer.text)")
            }
            let fresh = try server.enrolmentCode(site.mainGate, token: site.ownerToken)
            let throttled = try server.post("/api/visitor-scanner/enrol", ["enrolmentCode": fresh])
            #expect(throttled.isError(429, "RATE_LIMITED") && throttled.headers["retry-after"] != nil, "\(throttled.text)")
            server.clock.advance(by: 60)
            #expect(try server.enrol(fresh).hasPrefix("gp1."), "the next minute takes codes again")
            #expect(try server.post("/api/admin/kiosks", token: site.approverToken,
                                    ["checkpointId": site.mainGate, "name": "K"]).isError(403, "FORBIDDEN"))
            for body in [["checkpointId": site.mainGate], ["name": "K"], ["checkpointId": site.mainGate, "name": ""],
                         ["checkpointId": site.mainGate, "name": String(repeating: "k", count: 101)]] as [[String: Any]] {
                #expect(try server.post("/api/admin/kiosks", token: site.ownerToken, body).isError(400, "BAD_REQUEST"), "\(body)")
            }
            #expect(try server.post("/api/admin/kiosks", token: site.ownerToken,
                                    ["checkpointId": String(repeating: "c", count: 5000), "name": "K"]).isError(404, "NOT_FOUND"))
            let other = try server.makeSite("Globex", domain: "globex.test")
            #expect(try server.post("/api/admin/kiosks", token: other.ownerToken,
                                    ["checkpointId": site.mainGate, "name": "K"]).isError(404, "NOT_FOUND"))
        }
    }

    /// Eight kiosks present one code at the same moment: exactly one is enrolled.
    @Test func aCodeRacedByManyKiosksEnrolsOne() throws {
        try withSite { server, site in
            let code = try server.enrolmentCode(site.mainGate, token: site.ownerToken)
            let results = runConcurrently(8) { _, start in
                let client = server.client()
                start()
                return try client.send("POST", "/api/visitor-scanner/enrol", json: ["enrolmentCode": code]).status
            }
            let statuses = results.compactMap { try? $0.get() }
            #expect(statuses.count == 8 && statuses.filter { $0 == 201 }.count == 1 && statuses.filter { $0 == 401 }.count == 7,
                    "\(statuses)")
            #expect(try server.auditEntries(.kioskEnrol).count == 1)
            #expect(try server.scannerTokens(site.ownerToken).filter { $0["kioskName"] is String }.count == 1)
        }
    }

    @Test func kioskLifetimeIsConfigured() throws {
        try withSite(configure: { $0.kioskTokenLifetimeDays = 2 }) { server, site in
            let kiosk = try server.enrol(try server.enrolmentCode(site.mainGate, token: site.ownerToken))
            server.clock.advance(by: 2 * 86_400 - 5)
            #expect(try server.get("/api/visitor-scanner/stats", token: kiosk).status == 200)
            server.clock.advance(by: 10)
            #expect(try server.get("/api/visitor-scanner/stats", token: kiosk).isError(401, "UNAUTHORIZED"))
        }
    }
}
