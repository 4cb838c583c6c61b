import Foundation
import GatePassCore
import LoopbackHTTP
import SQLite
import Testing
@testable import GatePassServer

/// Issue 9, item 4: a stored value the code does not understand is an error for that request
/// (500 in the JSON shape, logged with its cause), never a default — above all never one that
/// admits. Each test damages one row with raw SQL, as a bug, a bad restore or a hand edit would.
@Suite struct FailClosedStorageTests {
    /// Runs `sql` on a second connection to the server's database; CHECK constraints are
    /// switched off for it, so values the schema would refuse can be written.
    static func damage(_ server: TestServer, _ sql: String, _ arguments: [any SQLBindable] = []) throws {
        let connection = try Connection(path: server.store.path)
        defer { connection.close() }
        try connection.executeScript("PRAGMA ignore_check_constraints = ON")
        #expect(try connection.execute(sql, arguments) == 1, "the damage must hit one row: \(sql)")
    }

    static func status(_ server: TestServer, visitor id: String) throws -> String? {
        try server.store.readConnection { db in
            try db.queryFirst("SELECT status FROM visitors WHERE id = ?", [id]) { try $0.string(0) }
        }
    }

    /// The request answered 500 INTERNAL and the log says why.
    static func expectInternal(_ answer: HTTPAnswer, _ server: TestServer, cause: String,
                               sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(answer.isError(500, "INTERNAL"), "\(answer.status) \(answer.text)", sourceLocation: sourceLocation)
        #expect(!answer.text.contains(cause), "the cause is logged, not answered", sourceLocation: sourceLocation)
        #expect(server.log.all.contains { $0.contains(cause) }, "logged: \(server.log.all.suffix(3))",
                sourceLocation: sourceLocation)
    }

    @Test func aVisitorWithAnUnknownStatusIsNeverAdmitted() throws {
        try withSite { server, site in
            let visitor = try server.createVisitor(site.ownerToken)
            let id = visitor["id"] as! String
            try Self.damage(server, "UPDATE visitors SET status = 'ADMITTED_MAYBE' WHERE id = ?", [id])
            let answer = try server.checkIn(site.scanner, visitor["shortId"] as! String)
            Self.expectInternal(answer, server, cause: "ADMITTED_MAYBE")
            #expect(try Self.status(server, visitor: id) == "ADMITTED_MAYBE", "nothing was written")
            #expect(try server.store.readConnection { try $0.scalarInt("SELECT COUNT(*) FROM scans") } == 0, "no scan recorded")
            Self.expectInternal(try server.get("/api/visitors/\(id)", token: site.ownerToken), server, cause: "ADMITTED_MAYBE")
            Self.expectInternal(try server.get("/api/visitors", token: site.ownerToken), server, cause: "ADMITTED_MAYBE")
        }
    }

    @Test func aMalformedShortIdIsAnErrorNotACrash() throws {
        try withSite { server, site in
            let visitor = try server.createVisitor(site.ownerToken)
            let id = visitor["id"] as! String
            try Self.damage(server, "UPDATE visitors SET short_id = 'not-a-pass' WHERE id = ?", [id])
            Self.expectInternal(try server.get("/api/visitors/\(id)", token: site.ownerToken), server, cause: "not-a-pass")
            Self.expectInternal(try server.get("/api/visitors", token: site.ownerToken), server, cause: "not-a-pass")
            // The server is still up and answers everything else.
            #expect(try server.get("/api/healthz").status == 200)
        }
    }

    /// An unparseable timestamp once read as 0 (1970): a pass then seemed valid since 1970.
    @Test func anUnparseableValidityTimeIsNeverAdmitted() throws {
        try withSite { server, site in
            let visitor = try server.createVisitor(site.ownerToken, ["validFrom": iso(testStart.addingTimeInterval(86_400)),
                                                                    "validUntil": iso(testStart.addingTimeInterval(90_000))])
            let id = visitor["id"] as! String
            try Self.damage(server, "UPDATE visitors SET valid_from = 'soon' WHERE id = ?", [id])
            let answer = try server.checkIn(site.scanner, visitor["shortId"] as! String)
            Self.expectInternal(answer, server, cause: "valid_from")
            #expect(try Self.status(server, visitor: id) == "EXPECTED")
        }
    }

    /// A session row that cannot be read admits no one: 401, and the log says why.
    @Test func aNullWhereAValueMustBeIsAnError() throws {
        try withSite { server, site in
            let visitor = try server.createVisitor(site.ownerToken)
            // A scanner session must name its checkpoint.
            try Self.damage(server, "UPDATE sessions SET checkpoint_id = NULL WHERE kind = 'scanner'")
            let answer = try server.checkIn(site.scanner, visitor["shortId"] as! String)
            #expect(answer.isError(401, "UNAUTHORIZED"), "\(answer.status) \(answer.text)")
            #expect(server.log.all.contains { $0.contains("(checkpoint_id) holds NULL") }, "\(server.log.all.suffix(3))")
            #expect(try Self.status(server, visitor: visitor["id"] as! String) == "EXPECTED")
            #expect(try server.get("/api/visitor-scanner/stats", token: site.scanner).isError(401, "UNAUTHORIZED"))
        }
    }

    /// An unknown role once read as APPROVER: the user could log in with rights nobody gave.
    @Test func aUserWithAnUnknownRoleCannotLogInOrAct() throws {
        try withSite { server, site in
            let code = try server.requestCode(site.desk.email)
            try Self.damage(server, "UPDATE users SET role = 'ROOT' WHERE id = ?", [site.desk.id])
            let login = try server.post("/api/auth/verify-otp", ["email": site.desk.email, "otp": code])
            Self.expectInternal(login, server, cause: "ROOT")
            #expect(login.string("token") == nil)
            // A token from before the damage does not act either: its user cannot be read, so
            // the session admits no one.
            let me = try server.get("/api/auth/me", token: site.deskToken)
            #expect(me.isError(401, "UNAUTHORIZED"), "\(me.status) \(me.text)")
            // Asking for a new code is refused as well (the user cannot be read).
            server.clock.advance(by: 31)
            Self.expectInternal(try server.post("/api/auth/send-otp", ["email": site.desk.email]), server, cause: "ROOT")
        }
    }

    @Test func aCheckpointOrDeviceThatCannotBeReadIsAnError() throws {
        try withSite { server, site in
            try Self.damage(server, "UPDATE checkpoints SET is_default = 7 WHERE id = ?", [site.mainGate])
            Self.expectInternal(try server.get("/api/checkpoints", token: site.ownerToken), server, cause: "(is_default)")
            try server.registerDevice(site.adminToken, "device-1")
            // The upsert keeps created_at and answers the stored row: a time that is text is 500.
            try Self.damage(server, "UPDATE devices SET created_at = 'yesterday' WHERE token = 'device-1'")
            let again = try server.post("/api/visitors/devices/register", token: site.adminToken,
                                        ["token": "device-1", "platform": "console"])
            Self.expectInternal(again, server, cause: "(created_at)")
        }
    }

    @Test func aScanWithAnUnknownResultIsAnError() throws {
        try withSite { server, site in
            let visitor = try server.createVisitor(site.ownerToken)
            #expect(try server.checkIn(site.scanner, visitor["shortId"] as! String).status == 200)
            try Self.damage(server, "UPDATE scans SET result = 'MAYBE'")
            Self.expectInternal(try server.get("/api/visitor-scanner/scan-history", token: site.ownerToken), server, cause: "MAYBE")
        }
    }

    @Test func aNotificationOfAnUnknownKindIsAnError() throws {
        try withSite { server, site in
            try server.awaitingVisitor(site)
            #expect(try server.get("/api/notifications", token: site.ownerToken).items.count >= 1)
            let damaged = try server.store.readConnection { db in
                try db.queryFirst("SELECT id FROM events WHERE title IS NOT NULL ORDER BY id DESC") { try $0.int64(0) }
            }
            try Self.damage(server, "UPDATE events SET kind = 'visitor.teleported' WHERE id = ?", [damaged!])
            Self.expectInternal(try server.get("/api/notifications", token: site.ownerToken), server, cause: "visitor.teleported")
        }
    }

    @Test func aStoredIdempotentAnswerThatCannotBeReadIsAnError() throws {
        try withSite { server, site in
            let key = ["Idempotency-Key": "damaged-1"]
            #expect(try server.post("/api/visitors", token: site.ownerToken, ["name": "Kept Answer"], headers: key).status == 201)
            try Self.damage(server, "UPDATE idempotency_keys SET headers = 'no colon here' WHERE key = 'damaged-1'")
            let replay = try server.post("/api/visitors", token: site.ownerToken, ["name": "Kept Answer"], headers: key)
            Self.expectInternal(replay, server, cause: "headers")
            #expect(try server.get("/api/visitors", token: site.ownerToken).items.count == 1, "nothing applied twice")
        }
    }
}
