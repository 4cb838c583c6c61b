extension PGConnection {
    /// The isolation level a transaction runs at (PostgreSQL's `BEGIN ISOLATION LEVEL …`).
    public enum Isolation: String, Sendable {
        case readCommitted = "READ COMMITTED"
        case repeatableRead = "REPEATABLE READ"
        /// Transactions that could not have run one after the other fail with
        /// `PGError.isSerializationFailure`; the caller runs them again.
        case serializable = "SERIALIZABLE"
    }

    /// Runs `body` in a transaction: committed when it returns, rolled back when it throws.
    ///
    ///     try connection.inTransaction(.serializable) { try connection.execute(…) }
    public func inTransaction<T>(_ isolation: Isolation = .readCommitted, _ body: () throws -> T) throws -> T {
        try TransactionScope.inTransaction(begin: "BEGIN ISOLATION LEVEL \(isolation.rawValue)", execute: { try execute($0) }, body)
    }

    /// Runs `body` inside a savepoint, nested in the open transaction: its changes are kept
    /// when it returns and undone when it throws, and the transaction goes on either way.
    public func inSavepoint<T>(_ body: () throws -> T) throws -> T {
        try TransactionScope.inSavepoint("gatepass_step", execute: { try execute($0) }, body)
    }
}
