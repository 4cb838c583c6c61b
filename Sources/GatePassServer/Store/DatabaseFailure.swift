/// What the API must know of a database's failure, whichever database it is: whether a
/// retry may succeed. Each implementation's error type conforms (Store/SQLite for SQLite).
protocol DatabaseFailure: Error {
    /// The change was refused, not made, because the database is closing.
    var isClosing: Bool { get }
    /// Another connection held a lock past the busy timeout.
    var isBusy: Bool { get }
    /// The database cannot take writes: its file is read-only, damaged or failing. The
    /// request answers 503 and the server stops taking writes (`StorageHealth`).
    var isUnwritable: Bool { get }
    /// A stored value the code does not understand: the table and column it was read from
    /// (the log names each once); nil for every other failure.
    var unreadableColumn: String? { get }
}
