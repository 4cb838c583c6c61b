import Foundation
import GatePassCore
import GatePassTestSupport
import LocalPostgres
import LoopbackHTTP
import Postgres
import SQLBinding
import Testing
@testable import GatePassServer

/// What a real server wrote to a SQLite site before it moves: visitors in three states,
/// check-ins and a check-out, a blocklist entry, and the audit entries of all of it.
struct FilledSite {
    var site: Site
    var onSite: [String: Any]
    var left: [String: Any]
    var databasePath: String
    var historyCount: Int

    static func fill(_ server: TestServer, _ site: Site) throws -> FilledSite {
        let onSite = try server.createVisitor(site.ownerToken, ["name": "Vera Onsite", "email": "vera@guest.test"])
        let left = try server.createVisitor(site.ownerToken, ["name": "Lars Left", "company": "Ünïcode GmbH"])
        _ = try server.createVisitor(site.ownerToken, ["name": "Eve Expected"])
        #expect(try server.checkIn(site.scanner, onSite["shortId"] as! String).string("result") == "CHECKED_IN")
        #expect(try server.checkIn(site.scanner, left["shortId"] as! String).string("result") == "CHECKED_IN")
        #expect(try server.checkOut(site.scanner, left["shortId"] as! String).status == 200)
        try server.block(site.ownerToken, ["name": "Barred Person", "email": "barred@example.com"])
        server.server.application.auditLog.waitForHead()
        return FilledSite(site: site, onSite: onSite, left: left, databasePath: server.server.application.configuration.database,
                          historyCount: try server.history(site.ownerToken).count)
    }
}

/// `gatepass db copy`: a SQLite site a real server filled, moved to PostgreSQL, served from
/// there with the same secret and pass keys; a tampered copy is caught; refusals write nothing.
@Suite(.enabled(if: PostgresCluster.isAvailable, Comment(rawValue: PostgresCluster.unavailableReason)))
struct DatabaseCopyTests {
    /// Starts a server on the PostgreSQL copy of `filled`, sharing the SQLite server's clock,
    /// secret and pass keys (as a moved site's instances would).
    func withServerOnCopy<T>(_ sqlite: TestServer, _ filled: FilledSite, url: String, _ body: (TestServer) throws -> T) throws -> T {
        var configuration = sqlite.server.application.configuration
        configuration.database = url
        configuration.secretFile = filled.databasePath + ".secret"
        configuration.passKeysFile = filled.databasePath + ".pass-keys"
        configuration.port = 0
        let log = RecordingLog()
        let server = try GatePassServer(configuration: configuration, devMode: true, clock: sqlite.clock, logSink: log)
        defer { server.stop(grace: .seconds(2)) }
        return try body(TestServer(server: server, clock: sqlite.clock, log: log, directory: sqlite.directory))
    }

    @Test func aServedSiteMovesAndKeepsWorkingOnPostgres() throws {
        try withSite { sqlite, site in
            let filled = try FilledSite.fill(sqlite, site)
            let url = try PostgresCluster.shared().makeDatabase()
            let report = try DatabaseCopy.copy(from: .sqlite(path: filled.databasePath), to: .postgres(url: url))
            #expect(report.tables.map(\.table) == DatabaseCopy.tables.map(\.name))
            #expect(report.tables.first { $0.table == "visitors" }?.rows == 3)
            #expect(report.tables.first { $0.table == "blocklist_entries" }?.rows == 1)
            #expect(report.tables.first { $0.table == "sessions" }?.rows ?? 0 >= 5)
            #expect(report.auditHeadCopied)
            #expect(report.auditHeadPath == URL(fileURLWithPath: filled.databasePath).deletingLastPathComponent().path + "/gatepass.audit-head")
            var info = stat()
            #expect(stat(report.auditHeadPath, &info) == 0 && info.st_mode & 0o777 == 0o600)
            guard case .intact(let copiedEntries) = report.audit else { Issue.record("the copy's chain is \(report.audit)"); return }
            #expect(copiedEntries > 0)

            try withServerOnCopy(sqlite, filled, url: url) { postgres in
                // Tokens made on SQLite authenticate: the sessions came along with their ids.
                #expect(try postgres.history(site.ownerToken).count == filled.historyCount)
                #expect(try postgres.visitor(filled.onSite["id"], site.ownerToken)["status"] as? String == "CHECKED_IN")
                #expect(try postgres.visitor(filled.left["id"], site.ownerToken)["status"] as? String == "CHECKED_OUT")
                #expect(try postgres.get("/api/blocklist", token: site.ownerToken).items.count == 1)
                // New rows continue after the copied ids (visitors, scans, events, audit, sessions).
                let newcomer = try postgres.createVisitor(site.ownerToken, ["name": "Nina New"])
                #expect(try postgres.checkIn(site.scanner, newcomer["shortId"] as! String).string("result") == "CHECKED_IN")
                #expect(try postgres.history(site.ownerToken).count == filled.historyCount + 1)
                let adminToken = try postgres.login(site.admin.email)
                #expect(try postgres.get("/api/visitors", token: adminToken).items.count == 4)
                postgres.server.application.auditLog.waitForHead()
                let verdict = try AuditVerification.verify(database: url, secretFile: filled.databasePath + ".secret")
                guard case .intact(let entries) = verdict else { Issue.record("the chain on PostgreSQL is \(verdict)"); return }
                #expect(entries > copiedEntries)
            }
        }
    }

    @Test func aCopyThatDiffersFromItsSourceIsRolledBack() throws {
        try withSite { sqlite, site in
            let filled = try FilledSite.fill(sqlite, site)
            let url = try PostgresCluster.shared().makeDatabase()
            let failure = #expect(throws: DatabaseCopyError.self) {
                try DatabaseCopy.copyTables(sourcePath: filled.databasePath, targetURL: url) { target in
                    _ = try target.execute("UPDATE visitors SET name = 'Mallory' WHERE name = 'Eve Expected'")
                }
            }
            #expect(failure?.description.contains("the copy of visitors differs") == true, "\(String(describing: failure))")
            let check = try PGConnection(url: url)
            defer { check.close() }
            #expect(try check.scalarInt("SELECT COUNT(*) FROM visitors") == 0)
            #expect(try check.scalarInt("SELECT COUNT(*) FROM organizations") == 0)
        }
    }

    @Test func theChecksumSeesOneChangedRow() throws {
        try withSite { sqlite, site in
            let filled = try FilledSite.fill(sqlite, site)
            let url = try PostgresCluster.shared().makeDatabase()
            _ = try DatabaseCopy.copy(from: .sqlite(path: filled.databasePath), to: .postgres(url: url))
            let copy = try ServerDatabase.open(.postgres(url: url))
            defer { copy.close() }
            for table in ["visitors", "audit_log"] {
                let source = try DatabaseCopy.checksum(table, in: sqlite.store, schemaSource: sqlite.store)
                #expect(try DatabaseCopy.checksum(table, in: copy, schemaSource: sqlite.store) == source)
            }
            let visitorsBefore = try DatabaseCopy.checksum("visitors", in: sqlite.store, schemaSource: sqlite.store)
            let auditBefore = try DatabaseCopy.checksum("audit_log", in: sqlite.store, schemaSource: sqlite.store)
            try copy.postgres.withConnection { target in
                _ = try target.execute("UPDATE visitors SET phone = '' WHERE name = 'Eve Expected'")
                // One bit of one link (a blob).
                _ = try target.execute("UPDATE audit_log SET link = set_byte(link, 0, get_byte(link, 0) # 1) WHERE seq = (SELECT MIN(seq) FROM audit_log)")
            }
            let visitorsAfter = try DatabaseCopy.checksum("visitors", in: copy, schemaSource: sqlite.store)
            #expect(visitorsAfter.rows == visitorsBefore.rows && visitorsAfter.sha256 != visitorsBefore.sha256,
                    "NULL and an empty text must differ")
            #expect(try DatabaseCopy.checksum("audit_log", in: copy, schemaSource: sqlite.store).sha256 != auditBefore.sha256)
        }
    }

    @Test func aTargetWithRowsIsRefusedNamingTheTable() throws {
        try withSite { sqlite, site in
            let filled = try FilledSite.fill(sqlite, site)
            let url = try PostgresCluster.shared().makeDatabase()
            _ = try DatabaseCopy.copy(from: .sqlite(path: filled.databasePath), to: .postgres(url: url))
            let again = #expect(throws: DatabaseCopyError.self) {
                try DatabaseCopy.copy(from: .sqlite(path: filled.databasePath), to: .postgres(url: url))
            }
            #expect(again?.description == "the PostgreSQL database is not empty: organizations holds rows; copy into a new database")
            // Only a counter moved past its start, as a used database has.
            let counted = try PostgresCluster.shared().makeDatabase()
            try ServerDatabase.open(.postgres(url: counted)).close()
            let connection = try PGConnection(url: counted)
            defer { connection.close() }
            _ = try connection.execute("UPDATE counters SET value = 7 WHERE name = 'visitor_change'")
            let counters = #expect(throws: DatabaseCopyError.self) {
                try DatabaseCopy.copy(from: .sqlite(path: filled.databasePath), to: .postgres(url: counted))
            }
            #expect(counters?.description.contains("counters holds rows") == true)
        }
    }
}

/// The refusals that need no PostgreSQL server, and the canonical rendering the checksums hash.
@Suite struct DatabaseCopyRefusalTests {
    @Test func theWrongKindsOfDatabaseAreRefused() throws {
        try withTemporaryDirectory { directory in
            let fromPostgres = #expect(throws: DatabaseCopyError.self) {
                try DatabaseCopy.copy(from: .postgres(url: "postgres://gatepass@127.0.0.1:1/site"), to: .postgres(url: "postgres://gatepass@127.0.0.1:1/other"))
            }
            #expect(fromPostgres?.description.hasPrefix("the source must be a SQLite database") == true)
            let toSQLite = #expect(throws: DatabaseCopyError.self) {
                try DatabaseCopy.copy(from: .sqlite(path: directory + "/a.db"), to: .sqlite(path: directory + "/b.db"))
            }
            #expect(toSQLite?.description.hasPrefix("the target must be a PostgreSQL database") == true)
            let missing = directory + "/missing.db"
            let noSource = #expect(throws: DatabaseCopyError.self) {
                try DatabaseCopy.copy(from: .sqlite(path: missing), to: .postgres(url: "postgres://gatepass@127.0.0.1:1/site"))
            }
            #expect(noSource?.description == "no SQLite database at \(missing)")
            #expect(!FileManager.default.fileExists(atPath: missing), "a copy never creates its source")
        }
    }

    @Test func aSourceWithoutItsSecretIsRefusedBeforeAnythingIsWritten() throws {
        try withSite { server, _ in
            let database = server.server.application.configuration.database
            let refused = #expect(throws: DatabaseCopyError.self) {
                try DatabaseCopy.copy(from: .sqlite(path: database), to: .postgres(url: "postgres://gatepass@127.0.0.1:1/site"),
                                      secretFile: database + ".elsewhere")
            }
            #expect(refused?.description.hasPrefix("no server secret at \(database).elsewhere") == true)
        }
    }

    /// A migration that adds a table must add it to the copy too (checked without PostgreSQL).
    @Test func everyTableOfTheSchemaIsCopied() throws {
        try withTemporaryDirectory { directory in
            let store = try ServerDatabase(path: directory + "/schema.db")
            defer { store.close() }
            let tables = try store.readConnection { connection in
                try connection.query("SELECT name FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name <> 'schema_migrations'") {
                    try $0.string(0)
                }
            }
            #expect(Set(tables) == Set(DatabaseCopy.tables.map(\.name)))
        }
    }

    @Test func theRenderingKeepsValuesApart() {
        let render = DatabaseCopy.canonicalRendering
        #expect(render([.null]) != render([.text("")]))
        #expect(render([.text("N")]) != render([.null]))
        #expect(render([.text("ab"), .text("")]) != render([.text("a"), .text("b")]))
        #expect(render([.integer(12)]) != render([.text("12")]))
        #expect(render([.blob([0xAB])]) != render([.text("ab")]))
        #expect(String(decoding: render([.integer(-5), .text("é"), .blob([0, 255]), .null]), as: UTF8.self) == "I-5;T2:éB2:00ffN\n")
    }
}
