import SQLite

extension ServerDatabase {
    /// The SQLite engine, for tests and tools that must reach under the repositories (to
    /// damage a row on purpose, say). Traps on another engine: a caller of these is
    /// SQLite-specific by nature.
    var sqlite: SQLiteEngine {
        guard let engine = engine as? SQLiteEngine else { preconditionFailure("this database is not SQLite") }
        return engine
    }

    /// The path of the SQLite file.
    public var path: String { sqlite.path }


    func writeConnection<T: Sendable>(_ body: @escaping @Sendable (Connection) throws -> T) throws -> T {
        defer { writeGeneration.add(1, ordering: .releasing) }
        return try sqlite.writeConnection(body)
    }

    func readConnection<T>(_ body: (Connection) throws -> T) throws -> T {
        try sqlite.readConnection(body)
    }
}
