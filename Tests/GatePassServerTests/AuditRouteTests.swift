import Foundation
import GatePassCore
import LoopbackHTTP
import Testing
@testable import GatePassServer

extension TestServer {
    /// The audit log as `token` reads it, newest first (every page).
    func auditEntries(_ token: String, _ query: String = "") throws -> [[String: Any]] {
        try allPages("/api/admin/audit" + (query.isEmpty ? "" : "?" + query), token: token, limit: 500).items
    }

    /// The entries added since `count` entries were there, oldest first.
    func auditEntries(after count: Int, _ token: String) throws -> [[String: Any]] {
        Array(try auditEntries(token).reversed().dropFirst(count))
    }

    func auditCount(_ token: String) throws -> Int { try auditEntries(token).count }

    func verifyAudit() throws -> AuditVerdict {
        server.application.auditLog.waitForHead()
        return try AuditVerification.verify(database: server.application.configuration.database)
    }
}

/// The entries a test's steps add, step by step.
final class AuditWatch {
    let server: TestServer
    let token: String
    private var seen: Int

    init(_ server: TestServer, _ token: String) throws {
        self.server = server
        self.token = token
        seen = try server.auditCount(token)
    }

    /// The entries added since the last call, oldest first.
    func added() throws -> [[String: Any]] {
        let new = try server.auditEntries(after: seen, token)
        seen += new.count
        return new
    }
}

private func object(_ value: Any?) -> [String: Any]? { value as? [String: Any] }

/// api.md "Audit log" through the API: one entry per change, in the change's transaction,
/// with the changed fields before and after and the actor; none for a refused request; the
/// list's filters and CSV; bulk reads recorded; the chain verifying after all of it.
@Suite struct AuditRouteTests {
    static let entryKeys: Set<String> = ["id", "at", "actorKind", "actorId", "action", "entity", "entityId", "before", "after"]

    @Test func everyVisitorChangeIsOneEntryWithTheChangedFields() throws {
        try withSite { server, site in
            let log = try AuditWatch(server, site.ownerToken)
            func added() throws -> [[String: Any]] { try log.added() }
            let visitor = try server.createVisitor(site.ownerToken, ["name": "Vera Visitor", "company": "Initech"])
            let id = visitor["id"] as! String
            let created = try added()
            #expect(created.count == 1)
            #expect(Set(created[0].keys) == Self.entryKeys)
            #expect(created[0]["action"] as? String == "visitor.create" && created[0]["entity"] as? String == "visitor")
            #expect(created[0]["entityId"] as? String == id)
            #expect(created[0]["actorKind"] as? String == "user" && created[0]["actorId"] as? String == site.owner.id)
            #expect(created[0]["before"] is NSNull)
            #expect(object(created[0]["after"])?["name"] as? String == "Vera Visitor")
            #expect(object(created[0]["after"])?["status"] as? String == "EXPECTED")

            let patched = try server.patch("/api/visitors/\(id)", token: site.adminToken, ["company": "Globex", "purpose": "Audit"])
            #expect(patched.status == 200)
            let update = try added()
            #expect(update.count == 1 && update[0]["action"] as? String == "visitor.update")
            #expect(update[0]["actorId"] as? String == site.admin.id)
            // Only what changed, on both sides; a field that was absent is null before.
            #expect(object(update[0]["before"])?.keys.sorted() == ["company", "purpose"])
            #expect(object(update[0]["before"])?["company"] as? String == "Initech")
            #expect(object(update[0]["before"])?["purpose"] is NSNull)
            #expect(object(update[0]["after"])?["company"] as? String == "Globex")
            #expect(object(update[0]["after"])?["purpose"] as? String == "Audit")

            // An edit that changes nothing is no change.
            #expect(try server.patch("/api/visitors/\(id)", token: site.adminToken, ["company": "Globex"]).status == 200)
            #expect(try added().isEmpty)

            let checkedIn = try server.checkIn(site.scanner, visitor["shortId"] as! String)
            #expect(checkedIn.string("result") == "CHECKED_IN")
            let checkin = try added()
            #expect(checkin.count == 1 && checkin[0]["action"] as? String == "visitor.checkin")
            #expect(object(checkin[0]["before"])?["status"] as? String == "EXPECTED")
            #expect(object(checkin[0]["after"])?["status"] as? String == "CHECKED_IN")
            #expect(checkin[0]["actorKind"] as? String == "user" && checkin[0]["actorId"] as? String == site.owner.id)

            // A second scan changes nothing (ALREADY_CHECKED_IN): no entry.
            #expect(try server.checkIn(site.scanner, visitor["shortId"] as! String).string("result") == "ALREADY_CHECKED_IN")
            #expect(try added().isEmpty)

            #expect(try server.checkOut(site.scanner, visitor["shortId"] as! String).string("result") == "CHECKED_OUT")
            let checkout = try added()
            #expect(checkout.count == 1 && checkout[0]["action"] as? String == "visitor.checkout")
            #expect(object(checkout[0]["after"])?["status"] as? String == "CHECKED_OUT")

            let other = try server.createVisitor(site.ownerToken, ["name": "Carl Cancelled"])
            _ = try added()
            #expect(try server.post("/api/visitors/\(other["id"] as! String)/cancel", token: site.ownerToken).status == 200)
            let cancel = try added()
            #expect(cancel.count == 1 && cancel[0]["action"] as? String == "visitor.cancel")
            #expect(object(cancel[0]["after"])?["status"] as? String == "CANCELLED")
        }
    }

    @Test func approvalsWalkInsAndTheOfficesCheckOutAreRecorded() throws {
        try withSite { server, site in
            let log = try AuditWatch(server, site.ownerToken)
            func added() throws -> [[String: Any]] { try log.added() }
            let visitor = try server.createVisitor(site.ownerToken, ["name": "Ada Approval", "requiresApproval": true])
            _ = try added()
            #expect(try server.checkIn(site.scanner, visitor["shortId"] as! String, ["confirmApprovalRequest": true])
                .string("result") == "AWAITING_APPROVAL")
            let asked = try added()
            #expect(asked.map { $0["action"] as? String } == ["visitor.request-approval"])
            #expect(try server.post("/api/approver/visitors/\(visitor["id"] as! String)/approve", token: site.approverToken,
                                    ["note": "ok"]).status == 200)
            let approved = try added()
            #expect(approved.map { $0["action"] as? String } == ["visitor.approve"])
            #expect(approved.first?["actorId"] as? String == site.approver.id)
            #expect(object(approved.first?["after"])?["status"] as? String == "APPROVED")
            #expect(object(approved.first?["after"])?["decisionNote"] as? String == "ok")

            let walkIn = try server.post("/api/visitor-scanner/walk-in-arrived", token: site.scanner, ["name": "Walter Walk"])
            #expect(walkIn.status == 201)
            let walked = try added()
            #expect(walked.map { $0["action"] as? String } == ["visitor.walk-in"])
            #expect(object(walked.first?["after"])?["name"] as? String == "Walter Walk")
            #expect(try server.post("/api/visitors/\(walkIn.visitor["id"] as! String)/reject-scan", token: site.adminToken).status == 200)
            #expect(try added().map { $0["action"] as? String } == ["visitor.reject"])

            let inside = try server.createVisitor(site.ownerToken, ["name": "Ina Inside"])
            _ = try added()
            #expect(try server.checkIn(site.scanner, inside["shortId"] as! String).string("result") == "CHECKED_IN")
            _ = try added()
            #expect(try server.post("/api/visitors/\(inside["id"] as! String)/checkout", token: site.adminToken).status == 200)
            let checkout = try added()
            #expect(checkout.map { $0["action"] as? String } == ["visitor.checkout"])
            #expect(checkout.first?["actorId"] as? String == site.admin.id)
        }
    }

    @Test func siteChangesSessionsAndTokensAreRecorded() throws {
        try withSite { server, site in
            let log = try AuditWatch(server, site.ownerToken)
            func added() throws -> [String] { try log.added().map { $0["action"] as? String ?? "?" } }
            let entry = try server.block(site.ownerToken, ["name": "Bob Banned"])
            #expect(try added() == ["blocklist.add"])
            let removed = try server.client().send("DELETE", "/api/blocklist/\(entry["id"] as! String)",
                                                   headers: ["Authorization": "Bearer \(site.ownerToken)"])
            #expect(removed.status == 204)
            #expect(try added() == ["blocklist.remove"])

            let user = try server.post("/api/users", token: site.adminToken, ["email": "new@acme.test", "name": "Nina New", "role": "HOST"])
            #expect(user.status == 201)
            #expect(try added() == ["user.create"])
            #expect(try server.patch("/api/users/\(user.string("id")!)", token: site.ownerToken, ["name": "Nina Newer"]).status == 200)
            let update = try server.auditEntries(site.ownerToken, "action=user.update")
            #expect(try added() == ["user.update"])
            #expect(object(update.first?["before"]).map { Array($0.keys) } == ["name"])

            #expect(try server.patch("/api/organization", token: site.ownerToken, ["retentionDays": 90]).status == 200)
            #expect(try added() == ["organization.update"])
            let organization = try server.auditEntries(site.ownerToken, "action=organization.update")
            #expect(object(organization.first?["before"])?["retentionDays"] as? Int == 180)
            #expect(object(organization.first?["after"])?["retentionDays"] as? Int == 90)

            #expect(try server.post("/api/checkpoints", token: site.ownerToken, ["name": "Back door"]).status == 201)
            #expect(try added() == ["checkpoint.create"])
            _ = try server.scannerTokenAnswer(site.adminToken)
            #expect(try added() == ["scanner-token.create"])

            let token = try server.login("new@acme.test")
            #expect(try added() == ["session.login"])
            #expect(try server.post("/api/auth/logout", token: token).status == 204)
            #expect(try added() == ["session.logout"])
            let sessions = try server.auditEntries(site.ownerToken, "entityId=\(user.string("id")!)")
            #expect(sessions.map { $0["action"] as? String } == ["session.logout", "session.login", "user.update", "user.create"])
        }
    }

    /// One of every change and bulk read the server makes through its routes: the log then
    /// holds every action `AuditAction` declares (a new action without a route writing it, or a
    /// route that stopped writing its entry, fails here).
    @Test func everyDeclaredActionIsWrittenByTheRouteThatMakesIt() throws {
        try withSite { server, site in
            let owner = site.ownerToken
            let visitor = try server.createVisitor(owner, ["name": "Every Action", "email": "every@example.com"])
            let id = visitor["id"] as! String
            #expect(try server.patch("/api/visitors/\(id)", token: owner, ["company": "Initech"]).status == 200)
            #expect(try server.post("/api/visitors/\(id)/invite", token: owner).status == 202)
            #expect(try server.checkIn(site.scanner, visitor["shortId"] as! String).string("result") == "CHECKED_IN")
            #expect(try server.checkOut(site.scanner, visitor["shortId"] as! String).string("result") == "CHECKED_OUT")
            let asking = try server.createVisitor(owner, ["name": "Needs Approval", "requiresApproval": true])
            #expect(try server.checkIn(site.scanner, asking["shortId"] as! String, ["confirmApprovalRequest": true])
                .string("result") == "AWAITING_APPROVAL")
            #expect(try server.post("/api/visitors/\(asking["id"] as! String)/approve-scan", token: owner).status == 200)
            let walkIn = try server.post("/api/visitor-scanner/walk-in-arrived", token: site.scanner, ["name": "Walk In"])
            #expect(try server.post("/api/visitors/\(walkIn.visitor["id"] as! String)/reject-scan", token: owner).status == 200)
            let cancelled = try server.createVisitor(owner, ["name": "Called Off"])
            #expect(try server.post("/api/visitors/\(cancelled["id"] as! String)/cancel", token: owner).status == 200)
            #expect(try server.post("/api/admin/visitors/\(cancelled["id"] as! String)/erase", token: owner).status == 200)
            #expect(try server.get("/api/admin/visitors/\(id)/export", token: owner).status == 200)

            let entry = try server.block(owner, ["name": "Someone Banned"])
            #expect(try server.client().send("DELETE", "/api/blocklist/\(entry["id"] as! String)",
                                             headers: ["Authorization": "Bearer \(owner)"]).status == 204)
            let user = try server.post("/api/users", token: owner, ["email": "every@acme.test", "name": "Eve Ry", "role": "HOST"])
            #expect(try server.patch("/api/users/\(user.string("id")!)", token: owner, ["name": "Eve Ryman"]).status == 200)
            #expect(try server.post("/api/auth/logout", token: try server.login("every@acme.test")).status == 204)
            #expect(try server.patch("/api/organization", token: owner, ["autoCheckoutAt": "19:00"]).status == 200)
            let gate = try server.post("/api/checkpoints", token: owner, ["name": "Side door"])
            let gateId = try #require(gate.string("id"))
            #expect(try server.patch("/api/checkpoints/\(gateId)", token: owner, ["name": "Side entrance"]).status == 200)
            _ = try server.enrol(try server.enrolmentCode(gateId, token: owner))
            let token = try #require(try server.scannerTokens(owner).first?["id"] as? String)
            #expect(try server.post("/api/admin/scanner-tokens/\(token)/revoke", token: owner).status == 204)
            #expect(try server.post("/api/admin/mail/test", token: owner, ["to": "ops@acme.test"]).status == 202)
            #expect(try server.post("/api/admin/retention/run", token: owner, ["dryRun": false]).status == 200)
            #expect(try server.get("/api/admin/scan-history.csv", token: owner).status == 200)
            #expect(try server.get("/api/admin/audit.csv", token: owner).status == 200)

            let written = Set(try server.auditEntries(owner).compactMap { $0["action"] as? String })
            let declared = Set(AuditAction.allCases.map(\.rawValue))
            // The server's own entries about the head are written at start (tested below).
            #expect(declared.subtracting(written) == ["audit-head.upgrade", "audit-head.recreate"],
                    "declared but not written: \(declared.subtracting(written).sorted())")
            #expect(written.subtracting(declared).isEmpty, "written but not declared: \(written.subtracting(declared).sorted())")
        }
    }

    @Test func aRefusedRequestLeavesNoEntry() throws {
        try withSite { server, site in
            let visitor = try server.createVisitor(site.ownerToken, ["name": "Rita Refused"])
            let before = try server.auditCount(site.ownerToken)
            let id = visitor["id"] as! String
            #expect(try server.patch("/api/visitors/\(id)", token: site.ownerToken, ["email": "not an email"]).status == 400)
            #expect(try server.post("/api/visitors/\(id)/checkout", token: site.ownerToken).status == 409)
            #expect(try server.post("/api/visitors", token: site.ownerToken, ["name": ""]).status == 400)
            #expect(try server.post("/api/users", token: site.adminToken, ["email": "o@acme.test", "name": "O", "role": "OWNER"]).status == 403)
            #expect(try server.patch("/api/users/\(site.owner.id)", token: site.ownerToken, ["disabled": true]).status == 409)
            #expect(try server.post("/api/blocklist", token: site.ownerToken, ["reason": "no one named"]).status == 400)
            // An idempotent replay is the first answer again, not a second change.
            let headers = ["Idempotency-Key": "audit-replay-1"]
            #expect(try server.post("/api/visitors/\(id)/cancel", token: site.ownerToken, headers: headers).status == 200)
            #expect(try server.post("/api/visitors/\(id)/cancel", token: site.ownerToken, headers: headers).status == 200)
            let after = try server.auditEntries(site.ownerToken)
            #expect(after.count == before + 1)
            #expect(after.first?["action"] as? String == "visitor.cancel")
        }
    }

    @Test func theListFiltersByTimeActorActionAndEntity() throws {
        try withSite { server, site in
            let start = server.clock.now()
            let first = try server.createVisitor(site.ownerToken, ["name": "First"])
            server.clock.advance(by: 60)
            let second = try server.createVisitor(site.adminToken, ["name": "Second"])
            let admin = try server.auditEntries(site.ownerToken, "actor=\(site.admin.id)")
            #expect(admin.allSatisfy { $0["actorId"] as? String == site.admin.id } && !admin.isEmpty)
            let creations = try server.auditEntries(site.ownerToken, "action=visitor.create")
            #expect(creations.map { $0["entityId"] as? String } == [second["id"] as? String, first["id"] as? String])
            let one = try server.auditEntries(site.ownerToken, "entityId=\(first["id"] as! String)")
            #expect(one.count == 1)
            let later = try server.auditEntries(site.ownerToken, "action=visitor.create&from=\(iso(start.addingTimeInterval(30)))")
            #expect(later.map { $0["entityId"] as? String } == [second["id"] as? String])
            let earlier = try server.auditEntries(site.ownerToken, "action=visitor.create&to=\(iso(start.addingTimeInterval(30)))")
            #expect(earlier.map { $0["entityId"] as? String } == [first["id"] as? String])
            #expect(try server.auditEntries(site.ownerToken, "actor=system").isEmpty)
            #expect(try server.auditEntries(site.ownerToken, "actor=user").count == (try server.auditCount(site.ownerToken)))
            let paged = try server.allPages("/api/admin/audit", token: site.ownerToken, limit: 1)
            let whole = try server.auditEntries(site.ownerToken)
            #expect(paged.pages == paged.items.count && ids(paged.items) == ids(whole))
        }
    }

    @Test func badFiltersAreClearErrors() throws {
        try withSite { server, site in
            for query in ["action=visitor.explode", "action=", "from=yesterday", "to=2026-13-01T00:00:00Z",
                          "actor=" + String(repeating: "x", count: 65), "entityId=a%20b", "limit=0", "cursor=garbage",
                          "action=%1B%5B2J"] {
                let answer = try server.get("/api/admin/audit?" + query, token: site.ownerToken)
                #expect(answer.isError(400, "BAD_REQUEST"), "\(query): \(answer.status) \(answer.text)")
            }
            let bad = try server.get("/api/admin/audit?action=visitor.explode", token: site.ownerToken)
            #expect(bad.errorMessage.contains("visitor.create"))
        }
    }

    @Test func onlyTheSitesManagersReadTheirOwnSitesLog() throws {
        try withSite { server, site in
            let other = try server.makeSite("Globex", domain: "globex.test")
            _ = try server.createVisitor(other.ownerToken, ["name": "Elsewhere"])
            #expect(try server.get("/api/admin/audit", token: site.approverToken).isError(403, "FORBIDDEN"))
            #expect(try server.get("/api/admin/audit", token: site.scanner).isError(403, "FORBIDDEN"))
            #expect(try server.get("/api/admin/audit").isError(401, "UNAUTHORIZED"))
            let mine = try server.auditEntries(site.adminToken)
            #expect(!mine.isEmpty)
            let theirs = Set(ids(try server.auditEntries(other.ownerToken)))
            #expect(Set(ids(mine)).isDisjoint(with: theirs))
        }
    }

    @Test func theCSVHoldsTheSameEntriesDefusedAndItsReadingIsRecorded() throws {
        try withSite { server, site in
            _ = try server.createVisitor(site.ownerToken, ["name": "=HYPERLINK(\"http://evil\")", "company": "A,B \"C\""])
            let json = try server.auditEntries(site.ownerToken)
            let csv = try server.get("/api/admin/audit.csv", token: site.adminToken)
            #expect(csv.status == 200)
            #expect(csv.headers["content-type"] == "text/csv; charset=utf-8")
            let lines = csv.text.components(separatedBy: "\r\n").filter { !$0.isEmpty }
            #expect(lines.first == "id,at,actorKind,actorId,action,entity,entityId,before,after")
            #expect(lines.count >= json.count + 1)
            #expect(lines[1].hasPrefix((json.first?["id"] as? String ?? "?") + ","))
            // The creation's values are one quoted cell; the name's formula stays text inside JSON.
            #expect(csv.text.contains("visitor.create"))
            #expect(!csv.text.contains("\r\n=") && !csv.text.contains(",=HYPERLINK"))
            let reads = try server.auditEntries(site.ownerToken, "action=audit.export")
            #expect(reads.count == 1 && reads.first?["actorId"] as? String == site.admin.id)

            #expect(try server.get("/api/admin/scan-history.csv", token: site.ownerToken).status == 200)
            #expect(try server.auditEntries(site.ownerToken, "action=scan-history.export").count == 1)
        }
    }

    @Test func theChainVerifiesAfterEveryKindOfChangeAndTheHeadFollowsIt() throws {
        try withSite { server, site in
            let visitor = try server.createVisitor(site.ownerToken, ["name": "Chain Checked"])
            _ = try server.checkIn(site.scanner, visitor["shortId"] as! String)
            _ = try server.block(site.ownerToken, ["email": "x@example.com"])
            _ = try server.patch("/api/organization", token: site.ownerToken, ["autoCheckoutAt": "18:30"])
            let count = try server.auditCount(site.ownerToken)
            let verdict = try server.verifyAudit()
            server.server.application.auditLog.waitForHead()
            #expect(verdict.isIntact, "\(verdict)")
            let head = try AuditHead.read(path: AuditHead.path(forDatabase: server.server.application.configuration.database))
            #expect(head != nil && head!.seq >= Int64(count))
        }
    }

    /// Head writes run off the writer's thread and fold together; at stop the head is the
    /// newest entry, so removing it afterwards is caught.
    @Test func atStopTheHeadIsTheNewestEntryAfterConcurrentChanges() throws {
        try withTemporaryDirectory { directory in
            let database = directory + "/kept.db"
            var entries = 0
            try withSite(configure: { $0.database = database }) { server, site in
                let shortIds = try (0..<12).map { try server.createVisitor(site.ownerToken, ["name": "Crowd \($0)"])["shortId"] as! String }
                let scanner = site.scanner
                let results = runConcurrently(12) { index, start in
                    start()
                    return try server.checkIn(scanner, shortIds[index]).string("result")
                }
                #expect(results.allSatisfy { (try? $0.get()) == "CHECKED_IN" })
                entries = try server.auditCount(site.ownerToken)
            }
            let head = try #require(try AuditHead.read(path: AuditHead.path(forDatabase: database)))
            let store = try ServerDatabase(path: database)
            let newest = try store.read { tx in try tx.audit.latest() }
            #expect(head.seq == newest?.seq && head.link == newest?.link)
            #expect(try store.read { tx in try tx.audit.entries(after: 0, limit: 10_000).count } >= entries)
            _ = try store.writeConnection { db in try db.execute("DELETE FROM audit_log WHERE seq = ?", [head.seq]) }
            store.close()
            let verdict = try AuditVerification.verify(database: database)
            #expect(!verdict.isIntact && verdict.description.contains("removed"), "\(verdict)")
        }
    }

    @Test func valuesAreJSONObjectsWhateverTheTextHolds() throws {
        try withSite { server, site in
            let hostile = "\"}{\\ ‮ <script>alert(1)</script> 'x'"
            _ = try server.createVisitor(site.ownerToken, ["name": "Eve", "purpose": hostile])
            let entry = try server.auditEntries(site.ownerToken, "action=visitor.create").first
            #expect(object(entry?["after"])?["purpose"] as? String == hostile)
        }
    }

    // MARK: - What verification trusts, and the head at start (issue 27 item 2)

    @Test func anEntryEditedInTheDatabaseFileIsNotServed() throws {
        try withSite { server, site in
            _ = try server.createVisitor(site.ownerToken, ["name": "Vera Visible"])
            #expect(try server.get("/api/admin/audit", token: site.ownerToken).status == 200)
            // Values a login entry never had, marked erased so that their hashes are not asked.
            _ = try server.store.writeConnection { db in
                try db.execute(#"UPDATE audit_log SET after = '{"note":"forged"}', erased = 1 WHERE action = 'session.login'"#)
            }
            let answer = try server.get("/api/admin/audit", token: site.ownerToken)
            #expect(answer.status == 500 && !answer.text.contains("forged"), "\(answer.status) \(answer.text)")
            let csv = try server.get("/api/admin/audit.csv", token: site.ownerToken)
            #expect(!csv.text.contains("forged"))
            #expect(server.log.all.contains { $0.contains("gatepass audit verify") }, "\(server.log.all)")
            #expect(!(try server.verifyAudit()).isIntact)
        }
    }

    /// A server on `database` (a restart on the same file), stopped after `body`.
    private func withServer(on database: String, recreateAuditHead: Bool = false,
                            _ body: (GatePassServer) throws -> Void = { _ in }) throws {
        var configuration = ServerConfiguration()
        configuration.database = database
        configuration.port = 0
        configuration.threads = 2
        configuration.sqliteSynchronous = "NORMAL"
        let server = try GatePassServer(configuration: configuration, devMode: true, logSink: RecordingLog(),
                                        recreateAuditHead: recreateAuditHead)
        defer { server.stop(grace: .seconds(2)) }
        try body(server)
    }

    /// A database with a site and a few entries, its server stopped.
    private func withUsedDatabase(_ body: (String) throws -> Void) throws {
        try withTemporaryDirectory { directory in
            let database = directory + "/kept.db"
            try withSite(configure: { $0.database = database }) { server, site in
                _ = try server.createVisitor(site.ownerToken, ["name": "Hedda Head"])
            }
            try body(database)
        }
    }

    @Test func aServerDoesNotStartWithoutTheHeadOnALogWithEntries() throws {
        try withUsedDatabase { database in
            #expect(unlink(AuditHead.path(forDatabase: database)) == 0)
            #expect(throws: (any Error).self) { try withServer(on: database) }
        }
    }

    @Test func aHeadItsGroupOrOthersMayWriteStopsTheStart() throws {
        try withUsedDatabase { database in
            #expect(chmod(AuditHead.path(forDatabase: database), 0o666) == 0)
            #expect(throws: (any Error).self) { try withServer(on: database) }
        }
    }

    @Test func aLaggingHeadIsMovedForwardAtStart() throws {
        try withTemporaryDirectory { directory in
            let database = directory + "/kept.db"
            let headPath = AuditHead.path(forDatabase: database)
            var earlier = Data()
            try withSite(configure: { $0.database = database }) { server, site in
                _ = try server.createVisitor(site.ownerToken, ["name": "Lagging One"])
                server.server.application.auditLog.waitForHead()
                earlier = try #require(FileManager.default.contents(atPath: headPath))
                _ = try server.createVisitor(site.ownerToken, ["name": "Lagging Two"])
            }
            // As after a crash between a commit and its head write.
            #expect(FileManager.default.createFile(atPath: headPath, contents: earlier))
            #expect(chmod(headPath, 0o600) == 0)
            try withServer(on: database) { server in
                let newest = try #require(try server.store.read { tx in try tx.audit.latest() })
                let head = try #require(try AuditHead.read(path: headPath))
                #expect(head.seq == newest.seq && head.link == newest.link)
            }
            #expect(try AuditVerification.verify(database: database).isIntact)
        }
    }

    /// The server's own entries about the head (no organization: only the store shows them all).
    private func headEntries(_ store: ServerDatabase) throws -> [StoredAuditEntry] {
        try store.read { tx in try tx.audit.entries(after: 0, limit: 10_000) }.filter { $0.entry.action.hasPrefix("audit-head.") }
    }

    @Test func afterARestoreTheFlagRecreatesTheHeadAndSaysSoInTheLog() throws {
        try withTemporaryDirectory { directory in
            let database = directory + "/kept.db"
            try withSite(configure: { $0.database = database }) { server, site in
                _ = try server.createVisitor(site.ownerToken, ["name": "Before The Backup"])
            }
            try FileManager.default.copyItem(atPath: database, toPath: directory + "/backup.db")
            try withServer(on: database) { server in
                // An entry the backup will not have.
                try server.store.write { tx in
                    try server.application.audit(.mailTest, id: nil, .none, by: .system, organizationId: nil, at: Date(), tx)
                }
                server.application.moveAuditHead()
            }
            // The backup comes back; the head stays where the lost entries had taken it.
            for suffix in ["-wal", "-shm"] { unlink(database + suffix) }
            try FileManager.default.removeItem(atPath: database)
            try FileManager.default.copyItem(atPath: directory + "/backup.db", toPath: database)
            let headBefore = try #require(try AuditHead.read(path: AuditHead.path(forDatabase: database)))
            do {
                try withServer(on: database)
                Issue.record("a server started on a log that ends before its head")
            } catch {
                #expect("\(error)".contains("ends at entry") && "\(error)".contains("--recreate-audit-head"), "\(error)")
            }
            try withServer(on: database, recreateAuditHead: true) { server in
                let recreated = try headEntries(server.store)
                #expect(recreated.map(\.entry.action) == ["audit-head.recreate"])
                #expect(recreated.first?.entry.before == #"{"headSeq":\#(headBefore.seq)}"#)
                #expect(recreated.first?.entry.after?.contains("ends at entry") == true, "\(String(describing: recreated.first?.entry.after))")
                let head = try #require(try AuditHead.read(path: AuditHead.path(forDatabase: database)))
                #expect(head.seq == recreated.first?.seq)
            }
            #expect(try AuditVerification.verify(database: database).isIntact)
            // Where the head holds, the flag changes nothing.
            try withServer(on: database, recreateAuditHead: true) { server in
                let entries = try headEntries(server.store)
                #expect(entries.count == 1)
            }
        }
    }

    @Test func anUnsignedHeadOfAnEarlierVersionIsSignedOnceAndItsErasuresListed() throws {
        try withTemporaryDirectory { directory in
            let database = directory + "/old.db"
            let secret = try ServerSecret.loadOrCreate(path: database + ".secret")
            let chain = AuditChain(key: secret.key(for: "audit-chain"))
            // A log as an earlier version left it: untagged links, every entry about a visitor
            // erased (its export too), no record of the erasure, and an unsigned head.
            let store = try ServerDatabase(path: database, synchronous: "NORMAL")
            var previous = AuditChain.genesis
            for (index, action) in ["visitor.create", "session.login", "visitor.export", "visitor.checkin"].enumerated() {
                let entry = AuditEntry(id: "old-\(index)", at: Date(timeIntervalSince1970: 1_700_000_000 + Double(index)),
                                       actorKind: .system, actorId: nil, action: action,
                                       entity: String(action.prefix { $0 != "." }), entityId: "visitor-1",
                                       before: nil, after: #"{"visits":\#(index)}"#)
                let hashes = AuditChain.fieldHashes(entry, organizationId: "org-1")
                let link = chain.legacyLink(previous: previous, hashes: hashes)
                try store.write { tx in
                    try tx.audit.append(StoredAuditEntry(seq: 0, entry: entry, organizationId: "org-1", erased: false,
                                                         fieldHashes: hashes, link: link))
                }
                previous = link
            }
            try store.write { tx in
                try tx.audit.eraseValues(seq: 1)
                try tx.audit.eraseValues(seq: 3)
            }
            store.close()
            let headPath = AuditHead.path(forDatabase: database)
            try "4 \(previous.map { String(format: "%02x", $0) }.joined())\n".write(toFile: headPath, atomically: true, encoding: .utf8)
            #expect(chmod(headPath, 0o600) == 0)
            #expect(try AuditVerification.verify(database: database) == .erasureUnrecorded(seq: 1, id: "old-0"))

            try withServer(on: database) { server in
                let upgrade = try headEntries(server.store)
                #expect(upgrade.map(\.entry.action) == ["audit-head.upgrade"])
                #expect(upgrade.first?.entry.after == #"{"erasedEntries":"1,3","headSeq":4,"logEnd":4}"#)
                #expect(try AuditHead.read(path: headPath)?.signature != nil)
            }
            #expect(try AuditVerification.verify(database: database).isIntact)
            // An unsigned head is never taken again: this version has written to the log.
            let newest = try #require(try AuditHead.read(path: headPath))
            try "\(newest.seq) \(newest.link.map { String(format: "%02x", $0) }.joined())\n"
                .write(toFile: headPath, atomically: true, encoding: .utf8)
            #expect(chmod(headPath, 0o600) == 0)
            do {
                try withServer(on: database)
                Issue.record("an unsigned head was taken over on a log this version wrote to")
            } catch {
                #expect("\(error)".contains("unsigned format"), "\(error)")
            }
        }
    }

    @Test func aRunningServerNeverWritesItsHeadOverRemovedEntries() throws {
        try withTemporaryDirectory { directory in
            let database = directory + "/kept.db"
            let headPath = AuditHead.path(forDatabase: database)
            try withSite(configure: { $0.database = database }) { server, site in
                _ = try server.createVisitor(site.ownerToken, ["name": "Kept Once"])
                server.server.application.auditLog.waitForHead()
                let head = try #require(try AuditHead.read(path: headPath))
                _ = try server.store.writeConnection { db in try db.execute("DELETE FROM audit_log WHERE seq = ?", [head.seq]) }
                _ = try server.createVisitor(site.ownerToken, ["name": "After The Cut"])
                _ = try server.createVisitor(site.ownerToken, ["name": "And Another"])
                server.server.application.auditLog.waitForHead()
                #expect(try AuditHead.read(path: headPath) == head, "the head stays as evidence")
                #expect(server.log.all.filter { $0.contains("no longer chains from entry \(head.seq)") }.count == 1,
                        "\(server.log.all)")
            }
            #expect(!(try AuditVerification.verify(database: database)).isIntact)
        }
    }
}
