/// One schema change, identified by an ordered id such as "0001-initial".
public struct Migration: Sendable {
    public var id: String
    public var sql: String

    public init(_ id: String, _ sql: String) {
        self.id = id
        self.sql = sql
    }
}

/// Applies numbered migrations in order, each in its own transaction, and records them in
/// `schema_migrations` so every one runs exactly once per database.
public enum Migrator {
    /// - Returns: the ids applied now (empty when the schema was already current).
    @discardableResult
    public static func migrate(_ connection: Connection, _ migrations: [Migration]) throws -> [String] {
        precondition(migrations.map(\.id) == migrations.map(\.id).sorted(), "migrations must be listed in order")
        try connection.executeScript(
            "CREATE TABLE IF NOT EXISTS schema_migrations (id TEXT PRIMARY KEY, applied_at TEXT NOT NULL DEFAULT CURRENT_TIMESTAMP)")
        let applied = Set(try connection.query("SELECT id FROM schema_migrations") { try $0.string(0) })
        var appliedNow: [String] = []
        for migration in migrations where !applied.contains(migration.id) {
            try connection.inTransaction {
                try connection.executeScript(migration.sql)
                try connection.execute("INSERT INTO schema_migrations (id) VALUES (?)", [migration.id])
            }
            appliedNow.append(migration.id)
        }
        return appliedNow
    }
}
