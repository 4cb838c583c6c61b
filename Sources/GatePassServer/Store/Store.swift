import Foundation
import GatePassCore
import SQLiteStore
import Synchronization

/// The server's SQLite database: one group-commit writer and a pool of readers over one
/// file in WAL mode, with foreign keys on and the schema migrated at open.
public final class Store: Sendable {
    public let path: String
    let writer: GroupCommitWriter
    let readers: ReaderPool
    /// Bumped after every committed write, so derived answers (stats) can be cached safely.
    let writeGeneration = Atomic<UInt64>(0)

    /// Opens or creates the database at `path` with owner-only permissions.
    /// - Parameter synchronous: SQLite's `synchronous` mode for the writer (see README).
    public init(path: String, synchronous: String = "FULL") throws {
        self.path = path
        let created = !FileManager.default.fileExists(atPath: path)
        let connection = try Connection(path: path)
        if created { chmod(path, 0o600) }
        try connection.executeScript("""
            PRAGMA journal_mode = WAL;
            PRAGMA foreign_keys = ON;
            PRAGMA synchronous = \(Store.validatedSynchronous(synchronous));
            """)
        try Migrator.migrate(connection, Schema.migrations)
        // The WAL and shared-memory files hold the same data as the database: keep them private too.
        for suffix in ["-wal", "-shm"] where FileManager.default.fileExists(atPath: path + suffix) {
            chmod(path + suffix, 0o600)
        }
        writer = GroupCommitWriter(connection: connection)
        readers = ReaderPool(path: path)
    }

    private static func validatedSynchronous(_ mode: String) -> String {
        let upper = mode.uppercased()
        precondition(["OFF", "NORMAL", "FULL", "EXTRA"].contains(upper), "invalid synchronous mode \(mode)")
        return upper
    }

    /// Runs `body` in a durable write transaction (see `GroupCommitWriter`).
    func write<T: Sendable>(_ body: @escaping @Sendable (Connection) throws -> T) throws -> T {
        defer { writeGeneration.add(1, ordering: .releasing) }
        return try writer.write(body)
    }

    /// Runs `body` on a reader connection.
    func read<T>(_ body: (Connection) throws -> T) throws -> T {
        try readers.read(body)
    }

    /// Finishes queued writes, checkpoints the WAL and closes every connection.
    public func close() {
        writer.close()
        readers.close()
    }

    /// Whether the database answers a trivial query (for /api/healthz).
    func isHealthy() -> Bool {
        (try? read { try $0.scalarInt("SELECT 1") }) == 1
    }
}

/// Conversions between the domain's types and the columns.
extension Date {
    var milliseconds: Int64 { Int64((timeIntervalSince1970 * 1000).rounded(.down)) }
    init(milliseconds: Int64) { self.init(timeIntervalSince1970: Double(milliseconds) / 1000) }
}

extension Row {
    func date(_ column: Int32) -> Date { Date(milliseconds: int64(column)) }
    func optionalDate(_ column: Int32) -> Date? { isNull(column) ? nil : date(column) }
}

func newIdentifier() -> String { UUID().uuidString.lowercased() }
