/// The one shape of a transaction and a savepoint, shared by the SQLite and PostgreSQL
/// wrappers so that both undo work the same way: only the statement that begins differs.
/// `execute` runs one statement on the wrapper's connection.
public enum TransactionScope {
    /// Runs `begin` (`BEGIN …`), then `body`; then `COMMIT` when `body` returns, or
    /// `ROLLBACK` when `body` or the commit throws, and the error is rethrown.
    public static func inTransaction<T>(begin: String, execute: (String) throws -> Void,
                                        _ body: () throws -> T) throws -> T {
        try run(begin: begin, commit: ["COMMIT"], undo: ["ROLLBACK"], execute: execute, body)
    }

    /// Runs `body` inside the savepoint `name`, nested in the open transaction: released
    /// when `body` returns, rolled back to (and released) when it throws, so the transaction
    /// goes on either way.
    public static func inSavepoint<T>(_ name: String, execute: (String) throws -> Void,
                                      _ body: () throws -> T) throws -> T {
        try run(begin: "SAVEPOINT \(name)", commit: ["RELEASE \(name)"],
                undo: ["ROLLBACK TO \(name)", "RELEASE \(name)"], execute: execute, body)
    }

    /// The undo statements report nothing of their own: when they fail too (a lost
    /// connection), the first error is the one that tells what happened.
    private static func run<T>(begin: String, commit: [String], undo: [String], execute: (String) throws -> Void,
                               _ body: () throws -> T) throws -> T {
        try execute(begin)
        do {
            let result = try body()
            for statement in commit { try execute(statement) }
            return result
        } catch {
            for statement in undo { _ = try? execute(statement) }
            throw error
        }
    }
}
