import Postgres

extension ServerDatabase {
    /// The PostgreSQL engine, for the store's own tools that reach under the repositories
    /// (`DatabaseCopy`). Traps on another engine: a caller of this is PostgreSQL-specific by nature.
    var postgres: PostgresEngine {
        guard let engine = engine as? PostgresEngine else { preconditionFailure("this database is not PostgreSQL") }
        return engine
    }
}

extension ServerDatabase {
    /// The advisory lock every write takes first on PostgreSQL, for tools that watch it in
    /// pg_locks (the bench measures how long writes wait for it).
    public static let postgresWriteLockKey: Int64 = PostgresLocks.writer
}
