import Foundation
import GatePassServer
import GatePassTestSupport
import LocalPostgres
import Testing
@testable import GatePassCommands

/// `gatepass db copy` and `gatepass db backup` on the command line: what they print, and
/// each refusal in one sentence with nothing written.
@Suite struct DatabaseCommandTests {
    /// A database file with one OWNER (so an organization, a checkpoint and audit entries) in
    /// a folder of its own, since a copy to PostgreSQL puts gatepass.audit-head beside the
    /// secret; removed afterwards.
    func withSiteDatabase<T>(_ body: (String) throws -> T) throws -> T {
        let folder = temporaryPath("site")
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: false)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let database = folder + "/site.db"
        let added = run("user", "add", "--db", database, "--email", "owner@site.test", "--name", "Olive Owner",
                        "--role", "OWNER", "--organization", "Site")
        try #require(added.status == 0, "\(added.terminal.stderr)")
        return try body(database)
    }

    @Test func copyRefusesWhatItCannotCopyInOneSentence() throws {
        let missing = temporaryPath("missing.db")
        let noSource = run("db", "copy", "--from", "sqlite:" + missing, "--to", "postgres://gatepass@127.0.0.1:1/site")
        #expect(noSource.status == 1)
        #expect(noSource.terminal.stderr == "error: no SQLite database at \(missing)")
        #expect(!FileManager.default.fileExists(atPath: missing))

        let fromPostgres = run("db", "copy", "--from", "postgres://gatepass@127.0.0.1:1/a", "--to", "postgres://gatepass@127.0.0.1:1/b")
        #expect(fromPostgres.status == 1 && fromPostgres.terminal.stderr.contains("the source must be a SQLite database (sqlite:PATH)"))
        let toSQLite = run("db", "copy", "--from", missing, "--to", "sqlite:" + missing + ".copy")
        #expect(toSQLite.status == 1 && toSQLite.terminal.stderr.contains("the target must be a PostgreSQL database"))

        let withPassword = run("db", "copy", "--from", missing, "--to", "postgres://gatepass:hunter2@127.0.0.1:1/site")
        #expect(withPassword.status == 2)
        #expect(withPassword.terminal.stderr.contains("--to: the PostgreSQL URL must not hold the password: set PGPASSWORD or use a passfile"))
        #expect(!withPassword.terminal.stderr.contains("hunter2"))
        #expect(run("db", "copy", "--from", missing).status == 2, "--to is required")
    }

    @Test func backupCopiesAndChecksAndNeverOverwrites() throws {
        try withSiteDatabase { database in
            let backup = database + ".backup"
            let first = run("db", "backup", "--db", database, "--to", backup)
            #expect(first.status == 0, "\(first.terminal.stderr)")
            let lines = first.terminal.stdout.split(separator: "\n")
            #expect(lines.first?.hasPrefix("backed up to \(backup): ") == true && lines.first?.hasSuffix(" pages, quick_check ok") == true)
            #expect(lines.contains("  users: 1 rows") && lines.contains("  organizations: 1 rows"))
            var info = stat()
            #expect(stat(backup, &info) == 0 && info.st_mode & 0o777 == 0o600)

            let again = run("db", "backup", "--db", database, "--to", backup)
            #expect(again.status == 1)
            #expect(again.terminal.stderr == "error: \(backup) exists: a backup never overwrites a file; name a new one")
        }
        let postgres = run("db", "backup", "--db", "postgres://gatepass@127.0.0.1:1/site", "--to", temporaryPath("dump"))
        #expect(postgres.status == 1 && postgres.terminal.stderr.contains("pg_dump --format=custom"))
        let missing = temporaryPath("missing.db")
        let noSource = run("db", "backup", "--db", missing, "--to", temporaryPath("backup.db"))
        #expect(noSource.status == 1 && noSource.terminal.stderr == "error: no SQLite database at \(missing)")
        #expect(!FileManager.default.fileExists(atPath: missing))
    }

    @Test(.enabled(if: PostgresCluster.isAvailable, Comment(rawValue: PostgresCluster.unavailableReason)))
    func copyPrintsEachTableAndTheAuditVerdict() throws {
        try withSiteDatabase { database in
            let url = try PostgresCluster.shared().makeDatabase()
            let copied = run("db", "copy", "--from", "sqlite:" + database, "--to", url)
            #expect(copied.status == 0, "\(copied.terminal.stderr)")
            let lines = copied.terminal.stdout.split(separator: "\n").map(String.init)
            // Names padded to the longest (scanner_device_passes, 21 characters), counts
            // right-aligned under "rows", then 64 hex digits.
            func padded(_ name: String, _ count: String) -> String {
                name + String(repeating: " ", count: 21 + 6 - name.count - count.count) + count + "  "
            }
            #expect(lines.first == padded("table", "rows") + "checksum (SHA-256, equal on both sides)")
            let organizations = padded("organizations", "1")
            #expect(lines.contains { $0.hasPrefix(organizations) && $0.count == organizations.count + 64 })
            #expect(lines.contains { $0.hasPrefix(padded("audit_log", "1")) })
            let folder = URL(fileURLWithPath: database).deletingLastPathComponent().path
            #expect(lines.contains("audit head copied to \(folder)/gatepass.audit-head"))
            #expect(lines.last?.hasPrefix("audit chain on PostgreSQL: ") == true)

            let twice = run("db", "copy", "--from", "sqlite:" + database, "--to", url)
            #expect(twice.status == 1)
            #expect(twice.terminal.stderr == "error: the PostgreSQL database is not empty: organizations holds rows; copy into a new database")
        }
    }

    /// `--database` is `--db` under its other name, on every command that opens a database;
    /// with a postgres:// URL the bootstrap commands work on PostgreSQL, naming the secret.
    @Test(.enabled(if: PostgresCluster.isAvailable, Comment(rawValue: PostgresCluster.unavailableReason)))
    func theBootstrapCommandsWorkOnPostgres() throws {
        let url = try PostgresCluster.shared().makeDatabase()
        let folder = temporaryPath("pg-site")
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: false)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let secret = folder + "/gatepass.secret"
        let added = run("user", "add", "--database", url, "--secret-file", secret, "--email", "owner@pg.test",
                        "--name", "Pia Owner", "--role", "OWNER", "--organization", "Postgres Site")
        #expect(added.status == 0, "\(added.terminal.stderr)")
        let gate = run("checkpoint", "add", "--db", url, "--secret-file", secret, "--organization", "Postgres Site",
                       "--name", "North gate")
        #expect(gate.status == 0, "\(gate.terminal.stderr)")
        let verified = run("audit", "verify", "--database", url, "--secret-file", secret)
        #expect(verified.status == 0 && verified.terminal.stdout.contains("intact"), "\(verified.terminal.stdout)\(verified.terminal.stderr)")
        let keys = run("keys", "list", "--db", url, "--keys-file", folder + "/gatepass.pass-keys")
        #expect(keys.status == 0, "\(keys.terminal.stderr)")
        // Without the secret, a PostgreSQL database's state files cannot be found: one sentence.
        let noSecret = run("audit", "verify", "--db", url)
        #expect(noSecret.status != 0 && noSecret.terminal.stderr.contains("name the secret"), "\(noSecret.terminal.stderr)")
        // Both names at once is the option twice.
        let twice = run("audit", "verify", "--db", url, "--database", url, "--secret-file", secret)
        #expect(twice.status == 2 && twice.terminal.stderr.contains("--db was given more than once"), "\(twice.terminal.stderr)")
        let withPassword = run("user", "add", "--database", "postgres://gatepass:hunter2@127.0.0.1:1/x", "--secret-file", secret,
                               "--email", "a@b.test", "--name", "A", "--role", "OWNER", "--organization", "X")
        #expect(withPassword.status != 0 && !withPassword.terminal.stderr.contains("hunter2"), "\(withPassword.terminal.stderr)")
        #expect(withPassword.terminal.stderr.contains("must not hold the password"), "\(withPassword.terminal.stderr)")
    }
}
