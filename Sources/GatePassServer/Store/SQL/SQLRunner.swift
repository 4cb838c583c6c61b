import Foundation
import SQLBinding

/// What the store's repositories ask of a connection, whichever database it is: statements
/// with SQLite's `?` parameters, run inside the transaction the engine opened. The
/// repositories in Store/SQL are written once against this; SQLite's `Connection` and
/// PostgreSQL's `PGConnection` conform (Store/SQLite, Store/Postgres), each with its
/// `SQLDialect` for the few phrases the two databases spell differently.
protocol SQLRunner {
    associatedtype Row: StoreRow
    var dialect: SQLDialect { get }
    @discardableResult
    func execute(_ sql: String, _ arguments: [any SQLBindable]) throws -> Int
    func query<T>(_ sql: String, _ arguments: [any SQLBindable], _ map: (Row) throws -> T) throws -> [T]
    func queryFirst<T>(_ sql: String, _ arguments: [any SQLBindable], _ map: (Row) throws -> T) throws -> T?
    func scalarInt(_ sql: String, _ arguments: [any SQLBindable]) throws -> Int64?
    /// Runs `body` so that a throw undoes only what it changed (a savepoint).
    func inSavepoint<T>(_ body: () throws -> T) throws -> T
    /// Called before the transaction writes its first event. PostgreSQL takes a lock held to
    /// the commit there, so event ids become visible in the order they were handed out (a
    /// stream that has seen id 105 must never later find 104); SQLite's one writer already
    /// commits in id order.
    func lockEventOrder() throws
}

extension SQLRunner {
    @discardableResult
    func execute(_ sql: String) throws -> Int { try execute(sql, []) }
    func query<T>(_ sql: String, _ map: (Row) throws -> T) throws -> [T] { try query(sql, [], map) }
    func queryFirst<T>(_ sql: String, _ map: (Row) throws -> T) throws -> T? { try queryFirst(sql, [], map) }
    func scalarInt(_ sql: String) throws -> Int64? { try scalarInt(sql, []) }
}

/// A result row of either database (`SQLBinding.SQLRow`, the checked decoder: columns read
/// by name, times within `StoredTime.range`, booleans 0 or 1, integers within their range),
/// with the one reader the store needs beyond it.
protocol StoreRow: SQLRow {
    func double(_ column: Int32) throws -> Double
}

/// The phrases SQLite and PostgreSQL spell differently. Everything else the repositories
/// say is the SQL both accept (times are integer milliseconds and booleans 0/1 in both).
struct SQLDialect: Sendable {
    /// `name(haystack, needle)` is the 1-based position of needle in haystack, 0 if absent.
    var substringPosition: String
    /// The highest events id ever handed out, purged ones included.
    var lastEventIdQuery: String
    /// Appended to a text in ORDER BY so both databases order it by its bytes (SQLite's
    /// BINARY collation; PostgreSQL's "C"), not by a locale: `DatabaseCopy` compares tables
    /// row by row in that order.
    var byteOrderCollation: String

    static let sqlite = SQLDialect(
        substringPosition: "instr",
        lastEventIdQuery: "SELECT COALESCE((SELECT seq FROM sqlite_sequence WHERE name = 'events'), 0)",
        byteOrderCollation: "")
    /// PostgreSQL's sequence is not read: it runs ahead of what has committed. The highest
    /// committed id is the answer (ids commit in order, see `lockEventOrder`), or the purge
    /// mark once every event was purged.
    static let postgres = SQLDialect(
        substringPosition: "strpos",
        lastEventIdQuery: """
            SELECT GREATEST(COALESCE((SELECT MAX(id) FROM events), 0),
                            (SELECT value FROM counters WHERE name = 'events_purged_through'))
            """,
        byteOrderCollation: #" COLLATE "C""#)
}

/// A stored value the store cannot use (a counter row missing, a hash of the wrong length):
/// the request fails rather than guess.
struct StoredDataError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
