import Foundation
import GatePassCore
import LoopbackHTTP
import SQLite
import Testing
@testable import GatePassServer

extension TestServer {
    /// Adds a blocklist entry as `token`, answering it.
    @discardableResult
    func block(_ token: String, _ fields: [String: Any]) throws -> [String: Any] {
        var body: [String: Any] = ["reason": "Threatened the reception staff on 2026-11-02"]
        body.merge(fields) { $1 }
        let answer = try post("/api/blocklist", token: token, body)
        guard answer.status == 201, let entry = answer.json else { throw TestFailure("block: \(answer.status) \(answer.text)") }
        return entry
    }
}

/// api.md "Blocklist" end to end: the routes and their rules, `BLOCKED` at every gate with
/// the alert on the owners' and admins' streams only, the reason nowhere the gate can read,
/// approvals refused, walk-ins rejected at once.
@Suite struct BlocklistRouteTests {
    static let reason = "Threatened the reception staff on 2026-11-02"
    static let entryKeys: Set<String> = ["id", "name", "email", "phone", "company", "reason", "expiresAt", "createdAt", "createdBy"]

    @Test func addListAndRemove() throws {
        try withSite { server, site in
            let createdAt = Timestamp(server.clock.now()).description
            let entry = try server.block(site.ownerToken, ["name": "  Ion  Ionescu ", "company": "Acme", "email": "Ion@Example.com",
                                                           "phone": "+40 711 000 111", "expiresAt": "2026-12-31T00:00:00Z"])
            #expect(Set(entry.keys) == Self.entryKeys)
            #expect(entry["name"] as? String == "Ion  Ionescu")
            #expect(entry["email"] as? String == "ion@example.com")
            #expect(entry["phone"] as? String == "+40 711 000 111")
            #expect(entry["company"] as? String == "Acme")
            #expect(entry["reason"] as? String == Self.reason)
            #expect(entry["expiresAt"] as? String == "2026-12-31T00:00:00Z")
            #expect(entry["createdAt"] as? String == createdAt)
            #expect(entry["createdBy"] as? String == site.owner.id)
            server.clock.advance(by: 1)
            let second = try server.block(site.adminToken, ["email": "other@example.com"])
            #expect(second["name"] is NSNull && second["phone"] is NSNull && second["company"] is NSNull && second["expiresAt"] is NSNull)
            #expect(second["createdBy"] as? String == site.admin.id)

            let list = try server.get("/api/blocklist", token: site.adminToken)
            #expect(list.status == 200 && list.keys == ["items", "nextCursor"])
            #expect(ids(list.items) == [second["id"] as! String, entry["id"] as! String])
            let pages = try server.allPages("/api/blocklist", token: site.ownerToken, limit: 1)
            #expect(ids(pages.items) == ids(list.items) && pages.pages == 2)

            let removed = try server.client().send("DELETE", "/api/blocklist/\(entry["id"] as! String)",
                                                   headers: ["Authorization": "Bearer \(site.ownerToken)"])
            #expect(removed.status == 204)
            #expect(ids(try server.get("/api/blocklist", token: site.ownerToken).items) == [second["id"] as! String])
            let again = try server.client().send("DELETE", "/api/blocklist/\(entry["id"] as! String)",
                                                 headers: ["Authorization": "Bearer \(site.ownerToken)"])
            #expect(again.isError(404, "NOT_FOUND"))
        }
    }

    /// A POST retried with its Idempotency-Key adds the entry once (api.md "Idempotency").
    @Test func aRetriedAdditionAddsOnce() throws {
        try withSite { server, site in
            let body: [String: Any] = ["email": "twice@example.com", "reason": "r"]
            let first = try server.post("/api/blocklist", token: site.ownerToken, body, headers: ["Idempotency-Key": "block-1"])
            let again = try server.post("/api/blocklist", token: site.ownerToken, body, headers: ["Idempotency-Key": "block-1"])
            #expect(first.status == 201 && again.status == 201)
            #expect(again.headers["idempotent-replayed"] == "true" && again.string("id") == first.string("id"))
            let other = try server.post("/api/blocklist", token: site.ownerToken, ["email": "else@example.com", "reason": "r"],
                                        headers: ["Idempotency-Key": "block-1"])
            #expect(other.isError(422, "IDEMPOTENCY_KEY_REUSED"))
            #expect(try server.get("/api/blocklist", token: site.ownerToken).items.count == 1)
        }
    }

    /// Another organization's entries are not seen, not removable (404) and never block here.
    @Test func entriesBelongToTheirOrganization() throws {
        try withServer { server in
            let site = try server.makeSite("Acme", domain: "acme.test")
            let other = try server.makeSite("Globex", domain: "globex.test")
            let theirs = try server.block(other.ownerToken, ["name": "Ana Pop"])
            #expect(try server.get("/api/blocklist", token: site.ownerToken).items.isEmpty)
            let delete = try server.client().send("DELETE", "/api/blocklist/\(theirs["id"] as! String)",
                                                  headers: ["Authorization": "Bearer \(site.ownerToken)"])
            #expect(delete.isError(404, "NOT_FOUND"))
            let visitor = try server.createVisitor(site.ownerToken, ["name": "Ana Pop"])
            #expect(try server.checkIn(site.scanner, visitor["shortId"] as! String).string("result") == "CHECKED_IN")
            #expect(try server.get("/api/blocklist", token: other.ownerToken).items.count == 1)
        }
    }

    /// The same visitor is blocked at two gates; the owner's and admin's streams get one
    /// `security.alert` each time, naming the entry and the gate; the approver's and the
    /// scanners' streams never see it (a later event every one of them receives comes first).
    @Test func blockedAtTwoGatesWithTheAlertForManagersOnly() throws {
        try withSite { server, site in
            let north = try server.post("/api/checkpoints", token: site.ownerToken, ["name": "North gate"])
            let northId = try #require(north.string("id"))
            let northScanner = try server.scannerToken(site.ownerToken, checkpointId: northId)
            let entry = try server.block(site.ownerToken, ["name": "Ștefan   Dobrescu", "phone": "0711 000 111"])
            let visitor = try server.createVisitor(site.ownerToken, ["name": "stefan dobrescu", "email": "stefan@example.com",
                                                                     "confirmBlocked": true])
            let shortId = visitor["shortId"] as! String

            let owner = try server.stream(site.ownerToken)
            let admin = try server.stream(site.adminToken)
            let approver = try server.stream(site.approverToken)
            let mainGate = try server.stream(site.scanner)
            let northGate = try server.stream(northScanner)

            let first = try server.checkIn(site.scanner, shortId)
            let second = try server.checkIn(northScanner, shortId)
            for (answer, gate) in [(first, site.mainGate), (second, northId)] {
                #expect(answer.status == 200 && answer.keys == ["result", "visitor", "scanId"])
                #expect(answer.string("result") == "BLOCKED")
                #expect(answer.visitor["status"] as? String == "EXPECTED", "a block changes no status")
                // The gate learns nothing of the entry: neither its reason nor its id.
                #expect(!answer.text.contains("Threatened") && !answer.text.contains(entry["id"] as! String))
                for stream in [owner, admin] {
                    let alert = stream.events(2)
                    #expect(kinds(alert) == ["security.alert", "notification.new"])
                    let data = try #require(alert.first?.json)
                    #expect(Set(data.keys) == ["visitor", "entryId", "checkpointId", "scanId"])
                    #expect(data["entryId"] as? String == entry["id"] as? String)
                    #expect(data["checkpointId"] as? String == gate)
                    #expect(data["scanId"] as? String == answer.string("scanId"))
                    #expect((data["visitor"] as? [String: Any])?["id"] as? String == visitor["id"] as? String)
                    #expect(alert.first?.data.contains("Threatened") == false)
                }
            }
            // Both attempts are in the scan history as BLOCKED.
            let history = try server.get("/api/visitor-scanner/scan-history?result=BLOCKED", token: site.ownerToken)
            #expect(history.items.count == 2)

            // A marker that reaches every stream: an unassigned walk-in at each gate.
            #expect(try server.post("/api/visitor-scanner/walk-in-arrived", token: site.scanner, ["name": "Marker Main"]).status == 201)
            #expect(try server.post("/api/visitor-scanner/walk-in-arrived", token: northScanner, ["name": "Marker North"]).status == 201)
            #expect(kinds(approver.events(2)).first == "request.created", "the approver got no security.alert")
            #expect(kinds(mainGate.events(1)) == ["request.created"], "the main gate got no security.alert")
            #expect(kinds(northGate.events(1)) == ["request.created"], "the north gate got no security.alert")

            // The notification lists follow: the owner has the alert, the approver has not.
            let ownerTitles = try server.notifications(site.ownerToken).items.compactMap { $0["kind"] as? String }
            #expect(ownerTitles.filter { $0 == "security.alert" }.count == 2)
            let approverKinds = try server.notifications(site.approverToken).items.compactMap { $0["kind"] as? String }
            #expect(!approverKinds.contains("security.alert"))
        }
    }

    /// Phone digits and case-insensitive email block too; an entry that expired, or was
    /// removed, no longer does.
    @Test func emailPhoneExpiryAndRemoval() throws {
        try withSite { server, site in
            let byEmail = try server.createVisitor(site.ownerToken, ["name": "Mail Person", "email": "mail@example.com"])
            let byPhone = try server.createVisitor(site.ownerToken, ["name": "Phone Person", "phone": "+40 (711) 000-222"])
            let emailEntry = try server.block(site.ownerToken, ["email": "MAIL@example.com"])
            try server.block(site.ownerToken, ["phone": "40711000222", "expiresAt": "2026-11-29T13:00:00Z"])
            #expect(try server.checkIn(site.scanner, byEmail["shortId"] as! String).string("result") == "BLOCKED")
            #expect(try server.checkIn(site.scanner, byPhone["shortId"] as! String).string("result") == "BLOCKED")
            server.clock.advance(by: 3600)   // 13:00:31: the phone entry has expired
            #expect(try server.checkIn(site.scanner, byPhone["shortId"] as! String).string("result") == "CHECKED_IN")
            let removed = try server.client().send("DELETE", "/api/blocklist/\(emailEntry["id"] as! String)",
                                                   headers: ["Authorization": "Bearer \(site.adminToken)"])
            #expect(removed.status == 204)
            #expect(try server.checkIn(site.scanner, byEmail["shortId"] as! String).string("result") == "CHECKED_IN")
        }
    }

    /// A block beats an approval: approve (either route) is 409 without the reason; reject is allowed.
    @Test func approvingABlockedVisitorIsAConflict() throws {
        try withSite { server, site in
            let waiting = try server.awaitingVisitor(site, ["name": "Ana  Pöp"])
            let id = waiting["id"] as! String
            try server.block(site.ownerToken, ["name": "ana pop"])
            for (path, token) in [("/api/visitors/\(id)/approve-scan", site.ownerToken), ("/api/approver/visitors/\(id)/approve", site.approverToken)] {
                let refused = try server.post(path, token: token, ["note": "ok"])
                #expect(refused.isError(409, "CONFLICT"), "\(path): \(refused.text)")
                #expect(refused.errorMessage.contains("blocklist") && !refused.errorMessage.contains("Threatened"))
            }
            #expect(try server.get("/api/visitors/\(id)", token: site.ownerToken).string("status") == "AWAITING_APPROVAL")
            let rejected = try server.post("/api/approver/visitors/\(id)/reject", token: site.approverToken)
            #expect(rejected.status == 200 && rejected.string("status") == "REJECTED")
        }
    }

    /// A blocked walk-in: 201 BLOCKED, stored REJECTED, no approver asked, the alert to managers.
    @Test func blockedWalkIn() throws {
        try withSite { server, site in
            let entry = try server.block(site.ownerToken, ["name": "Walk  Ín", "company": "Courier Co"])
            try server.registerDevice(site.ownerToken, "owner-phone")
            try server.registerDevice(site.approverToken, "approver-phone", approver: true)
            let owner = try server.stream(site.ownerToken)
            let approver = try server.stream(site.approverToken)
            let answer = try server.post("/api/visitor-scanner/walk-in-arrived", token: site.scanner,
                                         ["name": "walk in", "company": "COURIER co", "phone": "0700 000 000"])
            #expect(answer.status == 201 && answer.keys == ["result", "visitor"])
            #expect(answer.string("result") == "BLOCKED")
            #expect(answer.visitor["status"] as? String == "REJECTED" && answer.visitor["walkIn"] as? Bool == true)
            #expect(answer.visitor["decisionNote"] is NSNull && answer.visitor["decidedBy"] is NSNull)
            #expect(!answer.text.contains("Threatened") && !answer.text.contains(entry["id"] as! String))
            let alert = owner.events(2)
            #expect(kinds(alert) == ["security.alert", "notification.new"])
            #expect(alert.first?.json?["entryId"] as? String == entry["id"] as? String)
            #expect(alert.first?.json?["checkpointId"] as? String == site.mainGate)
            // Not in the approvals queue; the approver's next event is the marker.
            #expect(try server.get("/api/approver/visitors", token: site.approverToken).items.isEmpty)
            let other = try server.post("/api/visitor-scanner/walk-in-arrived", token: site.scanner,
                                        ["name": "Walk In", "company": "Other Co"])
            #expect(other.string("result") == "AWAITING_APPROVAL")
            #expect(kinds(approver.events(1)) == ["request.created"])
            // Push deliveries follow the same audience: the owner's device has the alert, the approver's not.
            func pushed(_ device: String) throws -> [String] {
                try server.get("/api/admin/push-deliveries?token=\(device)", token: site.ownerToken).items.compactMap { $0["kind"] as? String }
            }
            #expect(try pushed("owner-phone").contains("security.alert"))
            let approverPushes = try pushed("approver-phone")
            #expect(approverPushes.contains("request.created") && !approverPushes.contains("security.alert"))
        }
    }

    @Test func onlyOwnersAndAdminsReachTheBlocklist() throws {
        try withSite { server, site in
            for token in [site.approverToken, site.deskToken, site.scanner] {
                let list = try server.get("/api/blocklist", token: token)
                let add = try server.post("/api/blocklist", token: token, ["name": "X", "reason": "r"])
                #expect(list.isError(403, "FORBIDDEN") && add.isError(403, "FORBIDDEN"))
            }
            let anonymous = try server.get("/api/blocklist")
            #expect(anonymous.isError(401, "UNAUTHORIZED"))
            #expect(try server.get("/api/blocklist", token: site.ownerToken).items.isEmpty)
        }
    }

    /// Malformed, oversized and hostile bodies are 400 naming the field; nothing is stored.
    @Test(arguments: [
        (#"{"reason": "r"}"#, "name"),
        (#"{"name": "  ", "email": "", "phone": null, "reason": "r"}"#, "name"),
        (#"{"name": "Ana"}"#, "reason"),
        (#"{"name": "Ana", "reason": "   "}"#, "reason"),
        (#"{"name": 12, "reason": "r"}"#, "name"),
        (#"{"name": "Ana\u001b[2J", "reason": "r"}"#, "name"),
        (#"{"name": "\u0301\u200b", "reason": "r"}"#, "name"),
        (#"{"email": "ana@example.com\r\nBcc: x@y.z", "reason": "r"}"#, "email"),
        (#"{"phone": "+40 711; DROP TABLE", "reason": "r"}"#, "phone"),
        (#"{"email": "a@b.co", "company": "Acme", "reason": "r"}"#, "company"),
        (#"{"name": "Ana", "reason": "r", "expiresAt": "2026-11-29T11:59:59Z"}"#, "expiresAt"),
        (#"{"name": "Ana", "reason": "r", "expiresAt": "tomorrow"}"#, "expiresAt"),
        (#"{"name": "Ana", "reason": "r""#, nil),
        (#"["Ana"]"#, nil),
    ] as [(String, String?)])
    func badBodiesAreRefused(body: String, field: String?) throws {
        try withSite { server, site in
            let answer = try server.postRaw("/api/blocklist", token: site.ownerToken, body: Array(body.utf8))
            #expect(answer.isError(400, "BAD_REQUEST"), "\(body): \(answer.text)")
            if let field { #expect(answer.errorMessage.contains(field), "\(body): \(answer.errorMessage)") }
            #expect(try server.get("/api/blocklist", token: site.ownerToken).items.isEmpty)
        }
    }

    @Test func oversizedFieldsAndIdsAreRefused() throws {
        try withSite { server, site in
            let long = String(repeating: "é", count: 201)
            #expect(try server.post("/api/blocklist", token: site.ownerToken, ["name": long, "reason": "r"]).isError(400, "BAD_REQUEST"))
            let reason = String(repeating: "r", count: 501)
            #expect(try server.post("/api/blocklist", token: site.ownerToken, ["name": "Ana", "reason": reason]).isError(400, "BAD_REQUEST"))
            let marks = "a" + String(repeating: "\u{0301}", count: 900)
            #expect(try server.post("/api/blocklist", token: site.ownerToken, ["name": marks, "reason": "r"]).isError(400, "BAD_REQUEST"))
            let huge = try server.postRaw("/api/blocklist", token: site.ownerToken,
                                          body: Array(#"{"name": "Ana", "reason": ""#.utf8) + Array(repeating: UInt8(ascii: "r"), count: 70_000) + Array(#""}"#.utf8))
            #expect(huge.isError(413, "PAYLOAD_TOO_LARGE"))
            for id in [String(repeating: "x", count: 500), "..%2F..%2Fetc", "'%20OR%201=1--"] {
                let answer = try server.client().send("DELETE", "/api/blocklist/\(id)", headers: ["Authorization": "Bearer \(site.ownerToken)"])
                #expect(answer.isError(404, "NOT_FOUND"), "\(id): \(answer.status) \(answer.text)")
            }
            #expect(try server.get("/api/blocklist?limit=0", token: site.ownerToken).isError(400, "BAD_REQUEST"))
            #expect(try server.get("/api/blocklist?cursor=garbage", token: site.ownerToken).isError(400, "BAD_REQUEST"))
            #expect(try server.get("/api/blocklist", token: site.ownerToken).items.isEmpty)
        }
    }

    /// The check-in's lookup is an index probe per key, never a scan of the list.
    @Test func theCheckInLookupUsesTheIndexes() throws {
        try withSite { server, site in
            let keys = BlocklistKeys(name: "Ana Pop", email: "ana@example.com", phone: "+40 711 000 111")
            let query = try #require(SQLBlocklistRepository<Connection>.candidatesQuery(for: keys, organizationId: site.organizationId,
                                                                               now: server.clock.now()))
            let plan: [String] = try server.store.read { tx in
                try (tx as! SQLTransaction<Connection>).db.query("EXPLAIN QUERY PLAN " + query.sql, query.arguments) { try $0.string(3) }
            }
            let probes = plan.filter { $0.contains("blocklist_entries") }
            #expect(probes.count == 3, "\(plan)")
            for index in ["blocklist_name", "blocklist_email", "blocklist_phone"] {
                #expect(probes.contains { $0.contains("USING INDEX \(index)") }, "\(plan)")
            }
            #expect(!plan.contains { $0.hasPrefix("SCAN blocklist_entries") }, "\(plan)")
            #expect(SQLBlocklistRepository<Connection>.candidatesQuery(for: BlocklistKeys(name: nil, email: nil, phone: nil),
                                                              organizationId: site.organizationId, now: server.clock.now()) == nil)
        }
    }
}
