import Postgres

/// PostgreSQL's connection runs the store's SQL (Store/SQL), its `?` rewritten by the wrapper.
extension PGConnection: SQLRunner {
    var dialect: SQLDialect { .postgres }

    /// Held to the commit: an event id handed out by the sequence becomes visible only after
    /// every smaller one has committed or rolled back, so a stream that saw 105 never later
    /// finds 104 (the ordering api.md's `Last-Event-ID` replay relies on).
    func lockEventOrder() throws {
        _ = try execute("SELECT pg_advisory_xact_lock(?)", [PostgresLocks.eventOrder])
    }
}

extension PGError: DatabaseFailure {
    var isClosing: Bool { false }
    /// PostgreSQL keeps its own files' health (it stops on a failed fsync); a read-only
    /// standby or a full disk passes with a failover or more space, so nothing here stops the
    /// server's writes for good.
    var isUnwritable: Bool { false }
    /// A connection that failed or a lock or statement that timed out: a retry may succeed.
    var isBusy: Bool {
        isConnectionFailure || isSerializationFailure || sqlState == "55P03" || sqlState == "57014" || sqlState == "57P01"
    }
}

extension PGRow: StoreRow {}
