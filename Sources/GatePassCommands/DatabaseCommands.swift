import Foundation
import GatePassServer

/// `gatepass db …`: moving a site's database to PostgreSQL, and backing up a SQLite one.
enum DatabaseCommands {
    static let members: [GatePassCLI.Subcommand] = [
        .init("copy", "Copy a SQLite database into an empty PostgreSQL database and verify the copy.", DatabaseCopyCommand.self),
        .init("backup", "Back up a SQLite database file while the server may be writing it.", DatabaseBackupCommand.self),
    ]

    /// A database as `--db` and the configuration name one, refused here when it holds a
    /// password (DatabaseLocation says why).
    static func location(_ name: String, value: String, help: String) -> Option<DatabaseLocation> {
        Option(name, value: value, required: true, help: help) { (text: String) throws(UsageError) in
            do {
                return try DatabaseLocation(text)
            } catch {
                throw UsageError("\(name): \(error)")
            }
        }
    }
}

struct DatabaseCopyCommand: GatePassCommand {
    static let source = DatabaseCommands.location("--from", value: "sqlite:PATH", help: "The site's SQLite database file.")
    static let target = DatabaseCommands.location(
        "--to", value: "URL", help: "An empty PostgreSQL database, postgres://USER@HOST:PORT/DATABASE (the password from PGPASSWORD or a passfile).")
    static let secretFile = ServerOptions.secretFile
    static let configuration = CommandConfiguration(
        name: "gatepass db copy",
        overview: "Copy a site's SQLite database into an empty PostgreSQL database, in one transaction: every table, every row with its ids, the sequences continued after them. Before the commit each table's row count and SHA-256 content checksum are compared on both sides; any difference rolls everything back. Then the audit head goes beside the secret (gatepass.audit-head, unless one is there) and the audit chain is verified on PostgreSQL. Stop the server first: what it writes during the copy is not in it.",
        options: [source, target, secretFile])

    var source: DatabaseLocation
    var target: DatabaseLocation
    var secretFile: String?

    init(parsing arguments: ParsedArguments) throws(UsageError) {
        source = try arguments.required(Self.source)
        target = try arguments.required(Self.target)
        secretFile = try arguments.value(Self.secretFile)
    }

    func run(_ context: CommandContext) throws -> Int32 {
        let report: DatabaseCopyReport
        do {
            report = try DatabaseCopy.copy(from: source, to: target, secretFile: secretFile)
        } catch let refusal as DatabaseCopyError {
            throw CommandFailure(refusal.description)
        } catch {
            throw CommandFailure("cannot copy \(source.description) to \(target.description): \(error)")
        }
        let width = max(5, report.tables.map(\.table.count).max() ?? 0)
        context.terminal.out(visible: "table".padding(toLength: width, withPad: " ", startingAt: 0) + "  rows  checksum (SHA-256, equal on both sides)")
        for table in report.tables {
            context.terminal.out(visible: table.table.padding(toLength: width, withPad: " ", startingAt: 0)
                                 + "  \(String(table.rows).leftPadded(to: 4))  \(table.sha256)")
        }
        context.terminal.out(visible: report.auditHeadCopied ? "audit head copied to \(report.auditHeadPath)"
                             : "audit head: \(report.auditHeadPath) (not copied: already there, or no audit entry yet)")
        if report.audit.isIntact {
            context.terminal.out(visible: "audit chain on PostgreSQL: \(report.audit.description)")
            return 0
        }
        context.terminal.err(visible: "the copy is committed, but its audit chain is broken (the source's is too: the checksums matched): \(report.audit.description)")
        return 1
    }
}

struct DatabaseBackupCommand: GatePassCommand {
    static let database = DatabaseCommands.location("--db", value: "PATH", help: "The SQLite database file (the server may be running).")
    static let backupFile = Option<String>("--to", value: "FILE", required: true,
                                           help: "The backup file to create (mode 0600); an existing file is refused.")
    static let configuration = CommandConfiguration(
        name: "gatepass db backup",
        overview: "Back up a SQLite database file through SQLite's online backup API: a consistent copy even while a server writes it, made private (0600) from its first byte. The copy is then opened and checked (PRAGMA quick_check), and its page count and each table's rows are printed. Back up the state files beside it too (<db>.secret, <db>.pass-keys, <db>.audit-head). A PostgreSQL database is backed up with pg_dump.",
        options: [database, backupFile])

    var database: DatabaseLocation
    var backupFile: String

    init(parsing arguments: ParsedArguments) throws(UsageError) {
        database = try arguments.required(Self.database)
        backupFile = try arguments.required(Self.backupFile)
    }

    func run(_ context: CommandContext) throws -> Int32 {
        let report: DatabaseBackupReport
        do {
            report = try DatabaseBackup.backup(database, to: backupFile)
        } catch let refusal as DatabaseCopyError {
            throw CommandFailure(refusal.description)
        } catch {
            throw CommandFailure("cannot back up \(database.description): \(error)")
        }
        context.terminal.out(visible: "backed up to \(report.path): \(report.pages) pages, quick_check ok")
        for table in report.rows {
            context.terminal.out(visible: "  \(table.table): \(table.rows) rows")
        }
        return 0
    }
}

private extension String {
    func leftPadded(to width: Int) -> String { String(repeating: " ", count: max(0, width - count)) + self }
}
