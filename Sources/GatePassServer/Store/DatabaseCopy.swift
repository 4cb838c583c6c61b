import Foundation
import GatePassCrypto
import Postgres
import SQLBinding
import SQLite

/// `gatepass db copy`: moves a site's database from SQLite to an empty PostgreSQL database,
/// every row of every table with every value as it was (ids, sequence numbers, SQLite's
/// rowid), in one PostgreSQL transaction that commits only when each table's content
/// checksum on PostgreSQL equals the one on SQLite.
public enum DatabaseCopy {
    /// Copies `source` (SQLite) into `target` (PostgreSQL, migrated here, and empty), checks
    /// the copy table by table, then puts the audit head beside the target's secret and
    /// verifies the audit chain there.
    ///
    /// The source is opened as every command opens it (checked, and migrated if an older
    /// build made it), then read in one snapshot, so a server still writing it does no harm
    /// to the copy, but what it writes afterwards is not in it: stop the server first.
    /// - Parameter secretFile: the site's secret (default `<source>.secret`); PostgreSQL's
    ///   state files (`gatepass.audit-head`) go in its folder, as `gatepass serve` looks for them.
    /// - Throws: `DatabaseCopyError` for a refusal or a mismatch (nothing committed),
    ///   `ConfigurationError`, `SQLiteError` or `PGError` from the databases.
    public static func copy(from source: DatabaseLocation, to target: DatabaseLocation,
                            secretFile: String? = nil) throws -> DatabaseCopyReport {
        guard case .sqlite(let sourcePath) = source else {
            throw DatabaseCopyError("the source must be a SQLite database (sqlite:PATH), not \(source.description)")
        }
        guard case .postgres(let targetURL) = target else {
            throw DatabaseCopyError("the target must be a PostgreSQL database (postgres://USER@HOST:PORT/DATABASE), not \(target.description)")
        }
        // Opening a SQLite path creates the file: a mistyped path must not become an empty "site".
        guard FileManager.default.fileExists(atPath: sourcePath) else {
            throw DatabaseCopyError("no SQLite database at \(sourcePath)")
        }
        let sourceFiles = try DatabaseFiles(database: sourcePath, secretFile: secretFile)
        let secretPath = try sourceFiles.secretFile()
        // Checked before anything is written: the audit verification at the end needs it.
        guard FileManager.default.fileExists(atPath: secretPath) else {
            throw DatabaseCopyError("no server secret at \(secretPath): the audit key comes from it (give --secret-file)")
        }

        let tables = try copyTables(sourcePath: sourcePath, targetURL: targetURL)

        let headPath = try DatabaseFiles(database: targetURL, secretFile: secretPath).auditHeadFile()
        let copiedHead = try copyAuditHead(from: try sourceFiles.auditHeadFile(), to: headPath)
        let verdict = try AuditVerification.verify(database: targetURL, secretFile: secretPath)
        return DatabaseCopyReport(tables: tables, auditHeadPath: headPath, auditHeadCopied: copiedHead, audit: verdict)
    }

    /// The copy and its check, in one PostgreSQL transaction holding the store's write lock
    /// (so no instance writes the target meanwhile), reading SQLite in one snapshot.
    static func copyTables(sourcePath: String, targetURL: String,
                           beforeVerifying: (PGConnection) throws -> Void = { _ in }) throws -> [TableChecksum] {
        let sourceStore = try ServerDatabase(path: sourcePath)
        defer { sourceStore.close() }
        let targetStore = try ServerDatabase.open(.postgres(url: targetURL))
        defer { targetStore.close() }
        return try targetStore.postgres.withConnection { target in
            try target.inTransaction(.readCommitted) {
                _ = try target.execute("SELECT pg_advisory_xact_lock(?)", [PostgresLocks.writer])
                return try sourceStore.readConnection { source in
                    try source.inTransaction(.deferred) {
                        try checkTableSet(source)
                        let plans = try tables.map { table in
                            CopyPlan(table: table, columns: try columns(of: table, source: source, target: target))
                        }
                        for plan in plans { try refuseRows(plan.table, in: target) }
                        try target.execute("DELETE FROM counters")
                        try target.execute("DELETE FROM server_defaults")
                        for plan in plans { try copyRows(plan, from: source, to: target) }
                        try beforeVerifying(target)
                        var checksums: [TableChecksum] = []
                        for plan in plans {
                            let expected = try checksum(plan.table, plan.columns, on: source)
                            let found = try checksum(plan.table, plan.columns, on: target)
                            guard expected == found else {
                                throw DatabaseCopyError("the copy of \(plan.table.name) differs from the source (\(expected.rows) rows \(expected.sha256) in SQLite, \(found.rows) rows \(found.sha256) in PostgreSQL); nothing was committed")
                            }
                            checksums.append(expected)
                        }
                        // Last, because setval is not undone by a rollback: a refused copy
                        // leaves the target's sequences where they were.
                        for plan in plans { try continueSequences(plan.table, source: source, target: target) }
                        return checksums
                    }
                }
            }
        }
    }

    // MARK: - The tables

    /// A table as the copy moves it.
    struct CopiedTable: Sendable {
        let name: String
        /// A unique key (every column where there is none), the order rows are copied and
        /// compared in: parents before children where a table refers to itself (sessions).
        let orderedBy: [String]
        /// Columns PostgreSQL numbers from an identity sequence, which must continue after
        /// the copied values.
        let identityColumns: [String]
        /// users and sessions: SQLite's implicit rowid, which the lists page on, is a real
        /// `rowid` column in PostgreSQL (Schema 0001).
        var copiesRowid: Bool { orderedBy == ["rowid"] }

        init(_ name: String, orderedBy: [String], identity: [String] = []) {
            self.name = name
            self.orderedBy = orderedBy
            identityColumns = identity
        }
    }

    /// Every table of `Schema`, in an order that inserts what a row refers to before the row.
    static let tables: [CopiedTable] = [
        CopiedTable("organizations", orderedBy: ["id"]),
        CopiedTable("users", orderedBy: ["rowid"], identity: ["rowid"]),
        CopiedTable("checkpoints", orderedBy: ["id"]),
        CopiedTable("kiosks", orderedBy: ["seq"], identity: ["seq"]),
        CopiedTable("sessions", orderedBy: ["rowid"], identity: ["rowid"]),
        CopiedTable("visitors", orderedBy: ["seq"], identity: ["seq"]),
        CopiedTable("scans", orderedBy: ["seq"], identity: ["seq"]),
        CopiedTable("blocklist_entries", orderedBy: ["seq"], identity: ["seq"]),
        CopiedTable("devices", orderedBy: ["token"]),
        CopiedTable("counters", orderedBy: ["name"]),
        CopiedTable("otp_codes", orderedBy: ["email"]),
        CopiedTable("otp_sends", orderedBy: ["email", "sent_at"]),
        CopiedTable("idempotency_keys", orderedBy: ["scope", "key"]),
        CopiedTable("events", orderedBy: ["id"], identity: ["id"]),
        CopiedTable("notification_marks", orderedBy: ["user_id", "event_id"]),
        CopiedTable("push_deliveries", orderedBy: ["token", "event_id"]),
        CopiedTable("mail_queue", orderedBy: ["seq"], identity: ["seq"]),
        CopiedTable("scanner_devices", orderedBy: ["device_id"]),
        CopiedTable("scanner_device_links", orderedBy: ["session_id"]),
        CopiedTable("scanner_device_passes", orderedBy: ["device_id", "visitor_id"]),
        CopiedTable("audit_log", orderedBy: ["seq"], identity: ["seq"]),
        CopiedTable("rate_windows", orderedBy: ["name"]),
        CopiedTable("server_defaults", orderedBy: ["id"]),
        CopiedTable("unknown_scan_days", orderedBy: ["checkpoint_id", "day"]),
    ]

    /// A column, with the kind its declared SQLite type gives every value in it.
    struct CopiedColumn: Sendable, Equatable {
        enum Kind: Sendable { case integer, text, blob }
        let name: String
        let kind: Kind
    }

    struct CopyPlan {
        let table: CopiedTable
        let columns: [CopiedColumn]
    }

    /// A table this list does not name would be left behind: refuse rather than copy part of a site.
    private static func checkTableSet(_ source: Connection) throws {
        let found = Set(try source.query(
            "SELECT name FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name <> 'schema_migrations'") {
            try $0.string(0)
        })
        if let unknown = found.subtracting(tables.map(\.name)).sorted().first {
            throw DatabaseCopyError("the SQLite database has a table \(unknown) that this build does not copy: a newer gatepass made it")
        }
    }

    /// The columns SQLite declares (SQLite's rowid first where it is copied), which must be
    /// the columns PostgreSQL has: both were migrated by this build.
    private static func columns(of table: CopiedTable, source: Connection, target: PGConnection) throws -> [CopiedColumn] {
        let columns = try sqliteColumns(of: table, in: source)
        let targetColumns = Set(try target.query(
            "SELECT column_name FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = ?",
            [table.name]) { try $0.string(0) })
        guard targetColumns == Set(columns.map(\.name)) else {
            throw DatabaseCopyError("\(table.name) has columns \(columns.map(\.name).sorted().joined(separator: ", ")) in SQLite but \(targetColumns.sorted().joined(separator: ", ")) in PostgreSQL")
        }
        return columns
    }

    private static func sqliteColumns(of table: CopiedTable, in source: Connection) throws -> [CopiedColumn] {
        var columns = table.copiesRowid ? [CopiedColumn(name: "rowid", kind: .integer)] : []
        columns += try source.query("SELECT name, type FROM pragma_table_info(?) ORDER BY cid", [table.name]) { row in
            let name = try row.string(0)
            let kind: CopiedColumn.Kind = switch try row.string(1).uppercased() {
            case "INTEGER": .integer
            case "TEXT": .text
            case "BLOB": .blob
            case let other: throw DatabaseCopyError("\(table.name).\(name) is declared \(other), a type this copy does not know")
            }
            return CopiedColumn(name: name, kind: kind)
        }
        return columns
    }

    /// The target must be empty but for what the migrations put there (the counters, at 0;
    /// the server's defaults, which the copy replaces).
    private static func refuseRows(_ table: CopiedTable, in target: PGConnection) throws {
        guard table.name != "server_defaults" else { return }
        let rows = table.name == "counters"
            ? try target.scalarInt("SELECT COUNT(*) FROM counters WHERE value <> 0")
            : try target.scalarInt("SELECT COUNT(*) FROM (SELECT 1 FROM \(table.name) LIMIT 1) AS any_row")
        guard rows == 0 else {
            throw DatabaseCopyError("the PostgreSQL database is not empty: \(table.name) holds rows; copy into a new database")
        }
    }

    // MARK: - Copying

    /// Rows go in batches (one statement, one round trip, for many rows), as they are read.
    private static func copyRows(_ plan: CopyPlan, from source: Connection, to target: PGConnection) throws {
        let names = plan.columns.map(\.name).joined(separator: ", ")
        let placeholders = "(" + Array(repeating: "?", count: plan.columns.count).joined(separator: ", ") + ")"
        // PostgreSQL takes at most 65535 parameters a statement.
        let rowsPerBatch = max(1, min(200, 60_000 / plan.columns.count))
        var batch: [SQLValue] = []
        func flush() throws {
            guard !batch.isEmpty else { return }
            let rows = batch.count / plan.columns.count
            let values = Array(repeating: placeholders, count: rows).joined(separator: ", ")
            try target.execute("INSERT INTO \(plan.table.name) (\(names)) VALUES \(values)", batch)
            batch.removeAll(keepingCapacity: true)
        }
        _ = try source.query(selectStatement(plan.table, plan.columns, dialect: source.dialect)) { row -> Void in
            batch += try values(of: row, plan.columns)
            if batch.count >= rowsPerBatch * plan.columns.count { try flush() }
        }
        try flush()
    }

    /// Sets each identity sequence past the highest copied value, and past SQLite's own
    /// AUTOINCREMENT mark (ids of deleted rows are never given again there either).
    private static func continueSequences(_ table: CopiedTable, source: Connection, target: PGConnection) throws {
        for column in table.identityColumns {
            let copied = try target.scalarInt("SELECT MAX(\(column)) FROM \(table.name)") ?? 0
            let handedOut = column == "rowid" ? 0
                : try source.scalarInt("SELECT seq FROM sqlite_sequence WHERE name = ?", [table.name]) ?? 0
            let highest = max(copied, handedOut)
            // An identity sequence starts at 1 and cannot be set to 0: an empty table keeps its start.
            guard highest > 0 else { continue }
            _ = try target.execute("SELECT setval(pg_get_serial_sequence(?, ?), ?)", [table.name, column, highest])
        }
    }

    private static func selectStatement(_ table: CopiedTable, _ columns: [CopiedColumn], dialect: SQLDialect) -> String {
        let order = table.orderedBy.map { key in
            columns.first { $0.name == key }?.kind == .text ? key + dialect.byteOrderCollation : key
        }
        return "SELECT \(columns.map(\.name).joined(separator: ", ")) FROM \(table.name) ORDER BY \(order.joined(separator: ", "))"
    }

    /// A row's values, each read as its column's kind: a value of another kind (SQLite lets
    /// a column hold any) is an error naming the column, never converted.
    private static func values<Row: StoreRow>(of row: Row, _ columns: [CopiedColumn]) throws -> [SQLValue] {
        try columns.indices.map { index in
            let column = Int32(index)
            guard !row.isNull(column) else { return .null }
            switch columns[index].kind {
            case .integer: return .integer(try row.int64(column))
            case .text: return .text(try row.string(column))
            case .blob: return .blob(try row.blob(column))
            }
        }
    }

    // MARK: - Checksums

    /// SHA-256 over every row of `table` in key order, each value rendered canonically:
    /// `N` for NULL, `I<decimal>;` for an integer, `T<byte count>:<UTF-8>` for a text,
    /// `B<byte count>:<hex>` for a blob, a newline after each row. The same code reads both
    /// databases, so equal contents give equal checksums whatever each stores underneath.
    static func checksum<Runner: SQLRunner>(_ table: CopiedTable, _ columns: [CopiedColumn], on runner: Runner) throws -> TableChecksum {
        let hasher = SHA256Hasher()
        var rows = 0
        _ = try runner.query(selectStatement(table, columns, dialect: runner.dialect), []) { row -> Void in
            hasher.update(canonicalRendering(try values(of: row, columns)))
            rows += 1
        }
        return TableChecksum(table: table.name, rows: rows, sha256: hex(hasher.finalize()))
    }

    /// The checksum of the table `name` as it is now in `store` (either backend), its
    /// columns as SQLite declares them in `schemaSource`.
    static func checksum(_ name: String, in store: ServerDatabase, schemaSource: ServerDatabase) throws -> TableChecksum {
        guard let table = tables.first(where: { $0.name == name }) else { preconditionFailure("\(name) is not a table of the schema") }
        let columns = try schemaSource.readConnection { try sqliteColumns(of: table, in: $0) }
        if store.engine is SQLiteEngine {
            return try store.readConnection { try checksum(table, columns, on: $0) }
        }
        return try store.postgres.withConnection { try checksum(table, columns, on: $0) }
    }

    static func canonicalRendering(_ values: [SQLValue]) -> [UInt8] {
        var bytes: [UInt8] = []
        for value in values {
            switch value {
            case .null: bytes.append(UInt8(ascii: "N"))
            case .integer(let integer): bytes += Array("I\(integer);".utf8)
            case .real(let real): bytes += Array("R\(real);".utf8)
            case .text(let text): bytes += Array("T\(text.utf8.count):".utf8) + Array(text.utf8)
            case .blob(let blob): bytes += Array("B\(blob.count):".utf8) + Array(hex(blob).utf8)
            }
        }
        bytes.append(UInt8(ascii: "\n"))
        return bytes
    }

    private static func hex(_ bytes: [UInt8]) -> String {
        bytes.map { String(format: "%02x", $0) }.joined()
    }

    // MARK: - The audit head

    /// The chain's head, kept outside the database, goes where the PostgreSQL instances look
    /// for it, unless one is there already; returns whether it was copied.
    private static func copyAuditHead(from sourcePath: String, to targetPath: String) throws -> Bool {
        guard !FileManager.default.fileExists(atPath: targetPath), let head = try AuditHead.read(path: sourcePath) else { return false }
        try head.save(path: targetPath)
        return true
    }
}

/// One table's row count and content checksum (`DatabaseCopy.checksum`).
public struct TableChecksum: Sendable, Equatable {
    public var table: String
    public var rows: Int
    /// SHA-256 in hex.
    public var sha256: String
}

/// What `DatabaseCopy.copy` did: every table's checksum (equal on both sides), where the
/// audit head is, and the target's audit verdict.
public struct DatabaseCopyReport: Sendable {
    public var tables: [TableChecksum]
    public var auditHeadPath: String
    /// False when there was no head to copy (no audit entry yet) or the target had one.
    public var auditHeadCopied: Bool
    public var audit: AuditVerdict
}

/// A copy or a backup refused (the wrong kind of database, a missing file, a target not
/// empty, a backup file that exists) or one that did not match its source: one sentence
/// saying what to do.
public struct DatabaseCopyError: Error, Sendable, CustomStringConvertible {
    public var description: String
    init(_ description: String) { self.description = description }
}
