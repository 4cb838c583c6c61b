import Foundation
import SQLite

/// `gatepass db backup`: a consistent copy of a SQLite database, taken while a server may be
/// writing it, then opened and checked.
public enum DatabaseBackup {
    /// Copies `database` to a new file `backupPath` (mode 0600, never over an existing file)
    /// through SQLite's online backup API, then checks the copy (`PRAGMA quick_check`) and
    /// counts its pages and each table's rows.
    /// - Throws: `DatabaseCopyError` for a PostgreSQL database (pg_dump backs those up), a
    ///   missing source or a copy that fails its check; `SQLiteError` from SQLite.
    public static func backup(_ database: DatabaseLocation, to backupPath: String) throws -> DatabaseBackupReport {
        guard case .sqlite(let path) = database else {
            throw DatabaseCopyError("a PostgreSQL database is backed up with pg_dump --format=custom (README \"Moving a site to PostgreSQL and backups\"); gatepass db backup copies SQLite files")
        }
        // A plain open would create an empty database where the path is mistyped.
        guard FileManager.default.fileExists(atPath: path) else { throw DatabaseCopyError("no SQLite database at \(path)") }
        guard !FileManager.default.fileExists(atPath: backupPath) else {
            throw DatabaseCopyError("\(backupPath) exists: a backup never overwrites a file; name a new one")
        }
        let source = try Connection(path: path)
        defer { source.close() }
        let pages = try source.backup(to: backupPath)

        // Not read-only: the copy is in WAL mode, and a read-only connection cannot make the
        // shared-memory file it needs (SQLite gives it the copy's 0600 and removes it at close).
        let copy = try Connection(path: backupPath)
        defer { copy.close() }
        let findings = try copy.query("PRAGMA quick_check(20)") { try $0.string(0) }
        guard findings == ["ok"] else {
            throw DatabaseCopyError("the backup \(backupPath) fails PRAGMA quick_check: \(findings.prefix(3).joined(separator: "; "))")
        }
        let tables = try copy.query("SELECT name FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name") {
            try $0.string(0)
        }
        let rows = try tables.map { table in
            // The names come from the copy's own schema; quoted as identifiers all the same.
            let quoted = "\"" + table.replacingOccurrences(of: "\"", with: "\"\"") + "\""
            return (table: table, rows: Int(try copy.scalarInt("SELECT COUNT(*) FROM \(quoted)") ?? 0))
        }
        return DatabaseBackupReport(path: backupPath, pages: Int(pages), rows: rows)
    }
}

/// What a backup holds: its pages and the rows of each table, checked by `PRAGMA quick_check`.
public struct DatabaseBackupReport: Sendable {
    public var path: String
    public var pages: Int
    public var rows: [(table: String, rows: Int)]

    public func rows(of table: String) -> Int? { rows.first { $0.table == table }?.rows }
}
