import Foundation
import GatePassCore
import SQLite
import Synchronization

/// The server's SQLite database: one group-commit writer and a pool of readers over one
/// file in WAL mode, with foreign keys on and the schema migrated at open.
public final class ServerDatabase: Sendable {
    public let path: String
    let writer: GroupCommitWriter
    let readers: ReaderPool
    let busyTimeoutMilliseconds: Int32
    /// Bumped after every committed write, so derived answers (stats) can be cached safely.
    let writeGeneration = Atomic<UInt64>(0)

    /// Opens or creates the database at `path` with owner-only permissions, checks it
    /// (`PRAGMA quick_check`) and migrates it.
    /// - Parameter synchronous: SQLite's `synchronous` mode for the writer (see README).
    /// - Parameter busyTimeoutMilliseconds: how long a statement waits for another process's
    ///   lock before the request answers 503.
    /// - Throws: `SQLiteError`, also when the file is not a sound database.
    public init(path: String, synchronous: String = "FULL", busyTimeoutMilliseconds: Int32 = 5_000) throws {
        self.path = path
        self.busyTimeoutMilliseconds = busyTimeoutMilliseconds
        // Made 0600 before SQLite sees it: SQLite gives the WAL and shm files the database
        // file's mode, so all three are private from their first byte.
        try Connection.createPrivateFile(at: path)
        let connection = try Connection(path: path, busyTimeoutMilliseconds: busyTimeoutMilliseconds)
        do {
            try ServerDatabase.checkIntegrity(connection, path: path)
            try connection.executeScript("""
                PRAGMA journal_mode = WAL;
                PRAGMA foreign_keys = ON;
                PRAGMA synchronous = \(ServerDatabase.validatedSynchronous(synchronous));
                PRAGMA temp_store = MEMORY;
                PRAGMA cache_size = -16000;
                """)
            try Migrator.migrate(connection, Schema.migrations)
        } catch {
            connection.close()
            throw error
        }
        writer = GroupCommitWriter(connection: connection)
        readers = ReaderPool(path: path, busyTimeoutMilliseconds: busyTimeoutMilliseconds)
    }

    /// Refuses a database that fails `PRAGMA quick_check` (its pages and b-trees are checked,
    /// in time linear in its size): a server must not start answering from damaged data.
    private static func checkIntegrity(_ connection: Connection, path: String) throws {
        let findings: [String]
        do {
            findings = try connection.query("PRAGMA quick_check(20)") { try $0.string(0) }
        } catch let error as SQLiteError {
            throw SQLiteError(code: error.code, message: "\(path) fails PRAGMA quick_check: \(error.message); restore it from a backup",
                              sql: error.sql)
        }
        guard findings == ["ok"] else {
            throw SQLiteError(code: 11 /* SQLITE_CORRUPT */,
                              message: "\(path) fails PRAGMA quick_check: \(findings.prefix(3).joined(separator: "; ")); restore it from a backup")
        }
    }

    /// Throws unless the database can be written now (see `GroupCommitWriter.probeWritable`).
    func probeWritable() throws { try writer.probeWritable() }

    /// Throws unless a new connection can read the file's header and schema. The pooled
    /// connections keep pages in their caches (SQLite trusts them while the WAL is unchanged),
    /// so a header or schema damaged on disk shows only to a connection that reads afresh.
    func probeReadable() throws {
        let connection = try Connection(path: path, readOnly: true, busyTimeoutMilliseconds: busyTimeoutMilliseconds)
        defer { connection.close() }
        _ = try connection.scalarInt("SELECT COUNT(*) FROM sqlite_schema")
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

    /// Queues `body` for the writer and returns at once; `completion` runs after the commit.
    func writeAsync<T: Sendable>(_ body: @escaping @Sendable (Connection) throws -> T,
                                 completion: @escaping @Sendable (Result<T, any Error>) -> Void) {
        writer.submit(body) { [self] result in
            writeGeneration.add(1, ordering: .releasing)
            completion(result)
        }
    }

    /// Runs `body` on a reader connection.
    func read<T>(_ body: (Connection) throws -> T) throws -> T {
        try readers.read(body)
    }

    /// Finishes queued writes, checkpoints the WAL and closes every connection.
    /// Refuses the writes still queued and every later one (see `GroupCommitWriter.refuseQueued`).
    func refuseQueuedWrites() {
        writer.refuseQueued()
    }

    /// The writer's group-commit counts so far (benchmarks report jobs per commit).
    public var writerStatistics: GroupCommitStatistics { writer.statistics }

    public func close() {
        writer.close()
        readers.close()
    }
}

extension ShortID {
    /// A short id as this server stores it: canonical already. Any other spelling was not
    /// written by us, so it is not understood (even if a person's typing of it would be).
    init?(stored text: String) {
        guard let id = ShortID(text), id.rawValue == text else { return nil }
        self = id
    }
}

/// Conversions between the domain's types and the columns.
extension Date {
    var milliseconds: Int64 { Int64((timeIntervalSince1970 * 1000).rounded(.down)) }
    init(milliseconds: Int64) { self.init(timeIntervalSince1970: Double(milliseconds) / 1000) }
}

extension Row {
    func date(_ column: Int32) throws(SQLiteError) -> Date { Date(milliseconds: try int64(column)) }
    func optionalDate(_ column: Int32) throws(SQLiteError) -> Date? { isNull(column) ? nil : try date(column) }
}

/// A new UUID, version 7 (RFC 9562): 48 bits of Unix milliseconds, then 74 random bits
/// from the kernel's CSPRNG (getrandom, no file to open). Time-ordered ids land at the end
/// of their indexes instead of on random pages, which keeps inserts cheap.
func newIdentifier(now: Date = Date()) -> String {
    var generator = SystemRandomNumberGenerator()
    let milliseconds = UInt64(max(0, now.timeIntervalSince1970 * 1000))
    let random = generator.next() as UInt64
    let more = generator.next() as UInt64
    var bytes = [UInt8](repeating: 0, count: 16)
    for index in 0..<6 { bytes[index] = UInt8(truncatingIfNeeded: milliseconds >> (40 - 8 * UInt64(index))) }
    bytes[6] = 0x70 | UInt8(truncatingIfNeeded: random >> 60)          // version 7
    bytes[7] = UInt8(truncatingIfNeeded: random >> 52)
    bytes[8] = 0x80 | (UInt8(truncatingIfNeeded: random >> 44) & 0x3F)  // RFC 9562 variant
    for index in 9..<16 { bytes[index] = UInt8(truncatingIfNeeded: more >> (8 * UInt64(index - 9))) }
    let hex = Array("0123456789abcdef")
    var text = ""
    text.reserveCapacity(36)
    for (index, byte) in bytes.enumerated() {
        if index == 4 || index == 6 || index == 8 || index == 10 { text.append("-") }
        text.append(hex[Int(byte >> 4)])
        text.append(hex[Int(byte & 0x0F)])
    }
    return text
}
