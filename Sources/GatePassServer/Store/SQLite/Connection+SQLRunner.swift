import SQLite

/// SQLite's connection runs the store's SQL as it is written (Store/SQL).
extension Connection: SQLRunner {
    var dialect: SQLDialect { .sqlite }

    /// One writer commits at a time, so ids already become visible in the order they are given.
    func lockEventOrder() {}
}

extension Row: StoreRow {}

extension Schema {
    /// The migrations in SQLite's words, for SQLite's migrator.
    static var sqliteMigrations: [Migration] { migrations.map { Migration($0.id, $0.sqlite) } }
}
