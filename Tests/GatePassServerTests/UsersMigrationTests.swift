import Foundation
import SQLite
import Testing
@testable import GatePassServer

/// Migration 0005-users rebuilds the users table (SQLite cannot change a CHECK): the rows
/// that reference users must keep doing so, and the foreign keys must stay enforced.
@Suite struct UsersMigrationTests {
    static let before = Array(Schema.sqliteMigrations.prefix { $0.id < "0005-users" })

    func withOldDatabase(_ body: (Connection) throws -> Void) throws {
        try withTemporaryDirectory { directory in
            let connection = try Connection(path: directory + "/old.db")
            try connection.executeScript("PRAGMA foreign_keys = ON")
            try Migrator.migrate(connection, Self.before)
            try connection.executeScript("""
                INSERT INTO organizations (id, name, created_at) VALUES ('org', 'Acme', 0);
                INSERT INTO checkpoints (id, organization_id, name, is_default, created_at) VALUES ('gate', 'org', 'Main gate', 1, 0);
                INSERT INTO users (id, organization_id, email, name, role, can_scan, created_at, last_login_at, disabled)
                    VALUES ('owner', 'org', 'owner@acme.test', 'Olga', 'OWNER', 0, 1, 5, 0),
                           ('approver', 'org', 'approver@acme.test', 'Ana', 'APPROVER', 1, 2, NULL, 1);
                INSERT INTO sessions (id, user_id, kind, created_at, expires_at) VALUES ('s1', 'owner', 'login', 0, 99);
                INSERT INTO sessions (id, user_id, kind, parent_session_id, checkpoint_id, created_at, expires_at)
                    VALUES ('s2', 'owner', 'scanner', 's1', 'gate', 0, 99);
                INSERT INTO visitors (id, organization_id, short_id, name, approver_id, requires_approval, walk_in, status,
                                      valid_from, valid_until, created_at, change_seq, search_text, lookup_text)
                    VALUES ('v1', 'org', 'AAAAAAAA', 'Guest', 'approver', 1, 0, 'EXPECTED', 0, 1, 0, 1, '', '');
                INSERT INTO devices (token, platform, user_id, created_at, last_seen_at) VALUES ('d', 'ios', 'approver', 0, 0);
                """)
            try body(connection)
        }
    }

    @Test func referencesAndRowsSurviveAndHostIsAllowed() throws {
        try withOldDatabase { connection in
            #expect(throws: SQLiteError.self) {
                try connection.execute("INSERT INTO users (id, organization_id, email, name, role, created_at) VALUES ('h', 'org', 'h@acme.test', 'H', 'HOST', 0)")
            }
            #expect(try Migrator.migrate(connection, Schema.sqliteMigrations).contains("0005-users"))
            #expect(try connection.query("PRAGMA foreign_key_check") { try $0.string(0) }.isEmpty)
            let users = try connection.query("SELECT id, role, can_scan, last_login_at, disabled FROM users ORDER BY id") {
                "\(try $0.string(0)) \(try $0.string(1)) \(try $0.int(2)) \(try $0.optionalInt64(3).map(String.init) ?? "-") \(try $0.int(4))"
            }
            #expect(users == ["approver APPROVER 1 - 1", "owner OWNER 0 5 0"])
            try connection.execute("INSERT INTO users (id, organization_id, email, name, role, created_at) VALUES ('h', 'org', 'h@acme.test', 'H', 'HOST', 0)")
            // Still enforced, in every table that references users.
            #expect(throws: SQLiteError.self) {
                try connection.execute("INSERT INTO sessions (id, user_id, kind, created_at, expires_at) VALUES ('s3', 'nobody', 'login', 0, 1)")
            }
            #expect(throws: SQLiteError.self) { try connection.execute("DELETE FROM users WHERE id = 'approver'") }
            #expect(throws: SQLiteError.self) {
                try connection.execute("UPDATE visitors SET created_by = 'nobody' WHERE id = 'v1'")
            }
            try connection.execute("UPDATE visitors SET created_by = 'h' WHERE id = 'v1'")
            #expect(throws: SQLiteError.self) {
                try connection.execute("INSERT INTO users (id, organization_id, email, name, role, created_at) VALUES ('x', 'org', 'x@acme.test', 'X', 'ROOT', 0)")
            }
            // 0011 turns the old default into null: the server's default.
            #expect(try connection.scalarInt("SELECT COUNT(*) FROM organizations WHERE id = 'org' AND retention_days IS NULL") == 1)
            #expect(try connection.scalarInt("SELECT COUNT(*) FROM sqlite_temp_master") == 0)
        }
    }

    /// The safety net the rebuild relies on: had it lost a user that rows reference, the
    /// deferred foreign keys fail the commit and the database stays as it was. (The same
    /// migration, made to copy all users but one.)
    @Test func aRebuildThatLosesAReferencedUserRollsBack() throws {
        try withOldDatabase { connection in
            let real = try #require(Schema.sqliteMigrations.first { $0.id == "0005-users" })
            let lossy = real.sql.replacingOccurrences(of: "FROM users_before_0005;", with: "FROM users_before_0005 WHERE id <> 'approver';")
            #expect(lossy != real.sql)
            let error = #expect(throws: SQLiteError.self) { try Migrator.migrate(connection, Self.before + [Migration("0005-users", lossy)]) }
            #expect(error?.message.contains("FOREIGN KEY") == true, "\(String(describing: error))")
            #expect(try connection.scalarInt("SELECT COUNT(*) FROM schema_migrations WHERE id = '0005-users'") == 0)
            #expect(try connection.scalarInt("SELECT COUNT(*) FROM users") == 2)
            #expect(try connection.scalarInt("SELECT COUNT(*) FROM pragma_table_info('visitors') WHERE name = 'created_by'") == 0)
            // The real one then applies.
            #expect(try Migrator.migrate(connection, Schema.sqliteMigrations).contains("0005-users"))
        }
    }

    /// 0011: an organization's retention becomes null for the server's default; a stored 180
    /// (the default every organization had) becomes null, any other number stays.
    @Test func theOldDefaultRetentionBecomesTheServersDefault() throws {
        try withTemporaryDirectory { directory in
            let connection = try Connection(path: directory + "/old.db")
            try connection.executeScript("PRAGMA foreign_keys = ON")
            try Migrator.migrate(connection, Array(Schema.sqliteMigrations.prefix { $0.id < "0011-retention-default" }))
            try connection.executeScript("""
                INSERT INTO organizations (id, name, created_at, retention_days) VALUES ('a', 'Acme', 0, 180), ('g', 'Globex', 0, 30);
                """)
            #expect(try Migrator.migrate(connection, Schema.sqliteMigrations).contains("0011-retention-default"))
            let rows = try connection.query("SELECT id, retention_days FROM organizations ORDER BY id") {
                "\(try $0.string(0)) \(try $0.optionalInt64(1).map(String.init) ?? "null")"
            }
            #expect(rows == ["a null", "g 30"])
            #expect(try connection.scalarInt("SELECT retention_days FROM server_defaults") == 180)
            try connection.execute("INSERT INTO organizations (id, name, created_at) VALUES ('n', 'New', 0)")
            #expect(try connection.scalarInt("SELECT COUNT(*) FROM organizations WHERE id = 'n' AND retention_days IS NULL") == 1)
        }
    }
}
