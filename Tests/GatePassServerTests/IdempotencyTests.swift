import Foundation
import GatePassCore
import LoopbackHTTP
import Testing
@testable import GatePassServer

/// api.md "Idempotency (every POST)" and its scope rules.
@Suite struct IdempotencyTests {
    static func key(_ value: String) -> [String: String] { ["Idempotency-Key": value] }

    @Test func sameKeyAndRequestReplaysTheStoredResponseAndCreatesOneVisitor() throws {
        try withSite { server, site in
            let body: [String: Any] = ["name": "Replay Person", "company": "Acme"]
            let first = try server.post("/api/visitors", token: site.ownerToken, body, headers: Self.key("create-1"))
            #expect(first.status == 201)
            #expect(first.headers["idempotent-replayed"] == nil)
            server.clock.advance(by: 60)
            let second = try server.post("/api/visitors", token: site.ownerToken, body, headers: Self.key("create-1"))
            #expect(second.status == 201)
            #expect(second.headers["idempotent-replayed"] == "true")
            #expect(second.body == first.body)
            #expect(second.headers["content-type"] == first.headers["content-type"])
            #expect(second.headers["location"] == first.headers["location"])
            let list = try server.get("/api/visitors", token: site.ownerToken)
            #expect(list.items.count == 1)
            #expect(ids(list.items) == [first.string("id")!])
            // A new key is a new request.
            let third = try server.post("/api/visitors", token: site.ownerToken, body, headers: Self.key("create-2"))
            #expect(third.status == 201 && third.string("id") != first.string("id"))
            #expect(third.headers["idempotent-replayed"] == nil)
            let metrics = try server.get("/metrics").text
            #expect(metrics.contains("gatepass_idempotent_replays_total 1\n"))
        }
    }

    @Test func aReplayedCheckInWritesOneScan() throws {
        try withSite { server, site in
            let visitor = try server.createVisitor(site.ownerToken)
            let shortId = visitor["shortId"] as! String
            let first = try server.checkIn(site.scanner, shortId, headers: Self.key("scan-1"))
            #expect(first.string("result") == "CHECKED_IN")
            let replay = try server.checkIn(site.scanner, shortId, headers: Self.key("scan-1"))
            #expect(replay.headers["idempotent-replayed"] == "true")
            #expect(replay.body == first.body)
            #expect(replay.string("result") == "CHECKED_IN")
            let scans = try server.history(site.ownerToken)
            #expect(scans.count == 1)
            #expect(scans.first?["id"] as? String == first.string("scanId"))
            // Without the key, the same scan is a second attempt.
            #expect(try server.checkIn(site.scanner, shortId).string("result") == "ALREADY_CHECKED_IN")
            #expect(try server.history(site.ownerToken).count == 2)
        }
    }

    @Test func sameKeyWithAnotherRequestIsRefused() throws {
        try withSite { server, site in
            let first = try server.post("/api/visitors", token: site.ownerToken, ["name": "One"], headers: Self.key("k"))
            #expect(first.status == 201)
            let otherBody = try server.post("/api/visitors", token: site.ownerToken, ["name": "Two"], headers: Self.key("k"))
            #expect(otherBody.isError(422, "IDEMPOTENCY_KEY_REUSED"))
            let visitorId = first.string("id")!
            let otherPath = try server.post("/api/visitors/\(visitorId)/cancel", token: site.ownerToken, headers: Self.key("k"))
            #expect(otherPath.isError(422, "IDEMPOTENCY_KEY_REUSED"))
            #expect(try server.get("/api/visitors", token: site.ownerToken).items.count == 1)
            #expect(try server.visitor(visitorId, site.ownerToken)["status"] as? String == "EXPECTED")
        }
    }

    @Test func keysArePerUser() throws {
        try withSite { server, site in
            let owner = try server.post("/api/visitors", token: site.ownerToken, ["name": "Same"], headers: Self.key("shared"))
            let admin = try server.post("/api/visitors", token: site.adminToken, ["name": "Same"], headers: Self.key("shared"))
            #expect(owner.status == 201 && admin.status == 201)
            #expect(admin.headers["idempotent-replayed"] == nil)
            #expect(owner.string("id") != admin.string("id"))
            // Another body under the same key by another user is not a reuse either.
            let adminOther = try server.post("/api/visitors", token: site.adminToken, ["name": "Else"], headers: Self.key("owner-only"))
            #expect(adminOther.status == 201)
            #expect(try server.get("/api/visitors", token: site.ownerToken).items.count == 3)
        }
    }

    @Test func aKeyStillReplaysAfterReLogin() throws {
        try withSite { server, site in
            let body: [String: Any] = ["name": "Outbox Person"]
            let first = try server.post("/api/visitors", token: site.ownerToken, body, headers: Self.key("outbox-1"))
            #expect(try server.post("/api/auth/logout", token: site.ownerToken).status == 204)
            let again = try server.login(site.owner.email)
            let replay = try server.post("/api/visitors", token: again, body, headers: Self.key("outbox-1"))
            #expect(replay.status == 201 && replay.headers["idempotent-replayed"] == "true")
            #expect(replay.body == first.body)
            #expect(try server.get("/api/visitors", token: again).items.count == 1)
        }
    }

    /// A scanner token's key belongs to the user who made it: a new scanner token of a later
    /// session still de-duplicates the kiosk's outbox.
    @Test func scannerKeysBelongToTheirUserAcrossSessions() throws {
        try withSite { server, site in
            let visitor = try server.createVisitor(site.ownerToken, ["requiresApproval": true])
            let body: [String: Any] = ["shortId": visitor["shortId"]!, "confirmApprovalRequest": true]
            let first = try server.post("/api/visitor-scanner/checkin", token: site.scanner, body, headers: Self.key("q-1"))
            #expect(first.string("result") == "AWAITING_APPROVAL")
            let later = try server.scannerToken(try server.login(site.owner.email))
            let replay = try server.post("/api/visitor-scanner/checkin", token: later, body, headers: Self.key("q-1"))
            #expect(replay.headers["idempotent-replayed"] == "true" && replay.body == first.body)
            #expect(try server.history(site.ownerToken).count == 1)
        }
    }

    /// Records are kept at least 24 hours; the sweep drops them after that.
    @Test func recordsLastTwentyFourHours() throws {
        try withSite { server, site in
            let body: [String: Any] = ["name": "Kept A Day"]
            let first = try server.post("/api/visitors", token: site.ownerToken, body, headers: Self.key("day"))
            #expect(first.status == 201)
            server.clock.advance(by: 24 * 3600 - 60)
            server.server.application.purgeExpiredRecords()
            let token = try server.login(site.owner.email) // the first login has expired by now
            let replay = try server.post("/api/visitors", token: token, body, headers: Self.key("day"))
            #expect(replay.headers["idempotent-replayed"] == "true" && replay.body == first.body)
            server.clock.advance(by: 3600)
            server.server.application.purgeExpiredRecords()
            let fresh = try server.post("/api/visitors", token: token, body, headers: Self.key("day"))
            #expect(fresh.status == 201 && fresh.headers["idempotent-replayed"] == nil)
            #expect(fresh.string("id") != first.string("id"))
        }
    }

    @Test func aClientErrorIsStoredAndReplayed() throws {
        try withSite { server, site in
            // Garbage scanned text: 400, recorded once as INVALID.
            let garbage = try server.checkIn(site.scanner, "not a pass", headers: Self.key("bad-scan"))
            #expect(garbage.isError(400, "BAD_REQUEST"))
            let replay = try server.checkIn(site.scanner, "not a pass", headers: Self.key("bad-scan"))
            #expect(replay.status == 400 && replay.headers["idempotent-replayed"] == "true")
            #expect(replay.body == garbage.body)
            let scans = try server.history(site.ownerToken)
            #expect(scans.count == 1 && scans.first?["result"] as? String == "INVALID")
            // A 409 is stored too: replaying it does not cancel a second time or answer differently.
            let visitor = try server.createVisitor(site.ownerToken)
            let path = "/api/visitors/\(visitor["id"] as! String)/cancel"
            #expect(try server.post(path, token: site.ownerToken).status == 200)
            let conflict = try server.post(path, token: site.ownerToken, headers: Self.key("cancel-twice"))
            #expect(conflict.isError(409, "CONFLICT"))
            let conflictAgain = try server.post(path, token: site.ownerToken, headers: Self.key("cancel-twice"))
            #expect(conflictAgain.status == 409 && conflictAgain.headers["idempotent-replayed"] == "true")
            // A 404 for an unknown pass, recorded once as NOT_FOUND.
            let unknown = try server.checkIn(site.scanner, "ZZZZZZZZ", headers: Self.key("unknown"))
            #expect(unknown.isError(404, "NOT_FOUND"))
            #expect(try server.checkIn(site.scanner, "ZZZZZZZZ", headers: Self.key("unknown")).headers["idempotent-replayed"] == "true")
            #expect(try server.history(site.ownerToken, "result=NOT_FOUND").count == 1)
        }
    }

    @Test(arguments: [String(repeating: "k", count: 256), "clé-é", "tab\there", "emoji-🙂"])
    func invalidKeysAreBadRequests(_ key: String) throws {
        try withSite { server, site in
            // Non-ASCII bytes go on the wire as UTF-8.
            let answer = try server.post("/api/visitors", token: site.ownerToken, ["name": "Keyed"], headers: Self.key(key))
            #expect(answer.isError(400, "BAD_REQUEST"), "\(answer.text)")
            #expect(answer.errorMessage.contains("Idempotency-Key"))
            #expect(try server.get("/api/visitors", token: site.ownerToken).items.isEmpty)
        }
    }

    @Test func theLongestAndShortestKeysAreAccepted() throws {
        try withSite { server, site in
            for key in [String(repeating: "k", count: 255), "1", "~!@#$%^&*()_+ {}|:<>?"] {
                let body: [String: Any] = ["name": "Keyed \(key.count)"]
                let first = try server.post("/api/visitors", token: site.ownerToken, body, headers: Self.key(key))
                #expect(first.status == 201)
                let replay = try server.post("/api/visitors", token: site.ownerToken, body, headers: Self.key(key))
                #expect(replay.headers["idempotent-replayed"] == "true" && replay.body == first.body)
            }
            #expect(try server.get("/api/visitors", token: site.ownerToken).items.count == 3)
        }
    }

    @Test func keysOnUnauthenticatedRequestsAreIgnored() throws {
        try withServer { server in
            let email = ["email": "someone@acme.test"]
            let first = try server.post("/api/auth/send-otp", email, headers: Self.key("login-1"))
            #expect(first.status == 202 && first.headers["idempotent-replayed"] == nil)
            // Not replayed: the throttle answers.
            let second = try server.post("/api/auth/send-otp", email, headers: Self.key("login-1"))
            #expect(second.isError(429, "RATE_LIMITED") && second.headers["idempotent-replayed"] == nil)
            // Not even checked.
            server.clock.advance(by: 30)
            let odd = try server.post("/api/auth/send-otp", email, headers: Self.key(String(repeating: "x", count: 300)))
            #expect(odd.status == 202)
        }
    }
}
