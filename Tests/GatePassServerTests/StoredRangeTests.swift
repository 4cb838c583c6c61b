import Foundation
import GatePassCore
import LoopbackHTTP
import Postgres
import SQLite
import Testing
@testable import GatePassServer

/// A stored integer, time or boolean outside what the code wrote (a bad restore, a hand edit,
/// a bug) is an error for the request that reads it — 500, or 401 where it decides who the
/// caller is — never a crash and never a default; the server keeps answering, and the log
/// names the column once. Each test writes the value with raw SQL, on SQLite and on PostgreSQL.
@Suite struct StoredRangeTests {
    /// Runs `sql` on a connection of its own to the server's database (CHECK constraints off
    /// on SQLite, so values the schema would refuse can be written); it must change one row.
    static func damage(_ server: TestServer, _ backend: Backend, _ sql: String, _ arguments: [any SQLBindable] = []) throws {
        switch backend {
        case .sqlite:
            let connection = try Connection(path: server.store.path)
            defer { connection.close() }
            try connection.executeScript("PRAGMA ignore_check_constraints = ON")
            #expect(try connection.execute(sql, arguments) == 1, "the damage must hit one row: \(sql)")
        case .postgres:
            let connection = try PGConnection(url: server.server.application.configuration.database)
            defer { connection.close() }
            #expect(try connection.execute(sql, arguments) == 1, "the damage must hit one row: \(sql)")
        }
    }

    func withSite<T>(_ backend: Backend, _ body: (TestServer, Site) throws -> T) throws -> T {
        try withServer(on: backend) { server in try body(server, try server.makeSite()) }
    }

    /// Times beyond what a time column may hold: the ends of a 64-bit integer (which once
    /// trapped converting back to milliseconds) and the first millisecond of year 10000.
    static let outOfRangeTimes: [Int64] = [Int64.max, Int64.min, 253_402_300_800_000]

    static func expectUp(_ server: TestServer, sourceLocation: SourceLocation = #_sourceLocation) throws {
        #expect(try server.get("/api/healthz").status == 200, "the server still answers", sourceLocation: sourceLocation)
    }

    /// How many log lines name `cause`.
    static func mentions(_ server: TestServer, _ cause: String) -> Int {
        server.log.all.filter { $0.contains(cause) }.count
    }

    @Test(arguments: Backend.available)
    func aVisitorTimeOutOfRangeIsAnErrorNotACrash(_ backend: Backend) throws {
        try withSite(backend) { server, site in
            for value in Self.outOfRangeTimes {
                let visitor = try server.createVisitor(site.ownerToken)
                let id = visitor["id"] as! String
                try Self.damage(server, backend, "UPDATE visitors SET valid_until = ? WHERE id = ?", [value, id])
                let checkIn = try server.checkIn(site.scanner, visitor["shortId"] as! String)
                #expect(checkIn.isError(500, "INTERNAL"), "\(value): \(checkIn.status) \(checkIn.text)")
                #expect(try server.get("/api/visitors/\(id)", token: site.ownerToken).isError(500, "INTERNAL"))
                try Self.expectUp(server)
                try Self.damage(server, backend, "DELETE FROM visitors WHERE id = ?", [id])
            }
            // The operator is told once per column, not once per request.
            #expect(Self.mentions(server, "valid_until") == 1, "\(server.log.all.suffix(4))")
        }
    }

    @Test(arguments: Backend.available)
    func aSessionExpiryOutOfRangeIsUnauthorizedNotACrash(_ backend: Backend) throws {
        try withSite(backend) { server, site in
            for (index, value) in Self.outOfRangeTimes.enumerated() {
                let user = try server.addUser("guard\(index)@acme.test", role: .approver)
                let token = try server.login(user.email)
                try Self.damage(server, backend, "UPDATE sessions SET expires_at = ? WHERE user_id = ? AND kind = 'login'",
                                [value, user.id])
                let me = try server.get("/api/auth/me", token: token)
                #expect(me.isError(401, "UNAUTHORIZED"), "\(value): \(me.status) \(me.text)")
                try Self.expectUp(server)
            }
            #expect(Self.mentions(server, "expires_at") == 1, "\(server.log.all.suffix(4))")
        }
    }

    /// `disabled = 2` once counted as enabled: the user could ask for a code and log in.
    @Test(arguments: Backend.available)
    func aDisabledFlagThatIsNotABooleanFailsClosed(_ backend: Backend) throws {
        try withSite(backend) { server, site in
            let code = try server.requestCode(site.desk.email)
            try Self.damage(server, backend, "UPDATE users SET disabled = 2 WHERE id = ?", [site.desk.id])
            let login = try server.post("/api/auth/verify-otp", ["email": site.desk.email, "otp": code])
            #expect(login.string("token") == nil, "not logged in: \(login.status) \(login.text)")
            #expect(login.isError(500, "INTERNAL"), "\(login.status) \(login.text)")
            let me = try server.get("/api/auth/me", token: site.deskToken)
            #expect(me.isError(401, "UNAUTHORIZED"), "\(me.status) \(me.text)")
            try Self.expectUp(server)
            #expect(Self.mentions(server, "disabled") >= 1)
        }
    }

    /// Days are turned into times (the retention cutoff): a count beyond the domain's range
    /// once reached a time that trapped.
    @Test(arguments: Backend.available)
    func aRetentionPeriodOutOfRangeIsAnError(_ backend: Backend) throws {
        try withSite(backend) { server, site in
            for value in [Int64.max, 1 << 53, 0, -1] {
                try Self.damage(server, backend, "UPDATE organizations SET retention_days = ? WHERE id = ?",
                                [value, site.organizationId])
                let answer = try server.get("/api/organization", token: site.ownerToken)
                #expect(answer.isError(500, "INTERNAL"), "\(value): \(answer.status) \(answer.text)")
                try Self.expectUp(server)
            }
        }
    }
    /// The events purge mark is an id the event stream counts on from (its gap names the
    /// next one): at 2^63-1 that +1 trapped when a client resumed with Last-Event-ID.
    @Test(arguments: Backend.available)
    func anEventPurgeMarkOutOfRangeIsAnError(_ backend: Backend) throws {
        try withSite(backend) { server, site in
            try Self.damage(server, backend, "UPDATE counters SET value = ? WHERE name = 'events_purged_through'", [Int64.max])
            let answer = try server.get("/api/events", token: site.ownerToken, headers: ["Last-Event-ID": "1"])
            #expect(answer.isError(500, "INTERNAL"), "\(answer.status) \(answer.text)")
            try Self.expectUp(server)
            #expect(Self.mentions(server, "value") >= 1, "\(server.log.all.suffix(3))")
        }
    }
    /// A periodic job meets a damaged row on every run: the mail worker tells the log once.
    @Test func theMailWorkerNamesAnUnreadableRowOnce() throws {
        try withSite(.sqlite) { server, site in
            try Self.damage(server, .sqlite, """
                INSERT INTO mail_queue (id, organization_id, kind, recipient, payload, status, created_at, next_attempt_at,
                                        give_up_at, attempts)
                VALUES ('damaged-mail', ?, 'invitation', 'ana@example.test', '{}', 'queued', 0, 0, ?, -1)
                """, [site.organizationId, Int64.max / 2])
            for _ in 0..<3 { _ = server.server.deliverDueMail() }
            #expect(Self.mentions(server, "attempts") == 1, "\(server.log.all.suffix(4))")
            try Self.expectUp(server)
        }
    }
}
