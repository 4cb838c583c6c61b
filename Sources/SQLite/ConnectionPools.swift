import Foundation
import Synchronization

/// Read-only connections handed to one thread at a time.
///
/// WAL mode lets any number of readers run beside the single writer; each request thread
/// borrows a connection, so no connection is ever used by two threads at once.
public final class ReaderPool: @unchecked Sendable {
    // @unchecked: `idle` is guarded by `lock`, and the connections in it (not Sendable) are
    // touched only by the thread that borrowed one, which `Connection.lent` checks in debug
    // builds. A plain pthread mutex rather than
    // `Synchronization.Mutex`, whose priority-inheritance futex is slow when contended
    // (swiftlang/swift#88440); every request borrows a reader.
    private let path: String
    private let busyTimeoutMilliseconds: Int32
    private var idle: [Connection] = []
    private let lock = NSLock()
    private let closed = Atomic<Bool>(false)

    public init(path: String, busyTimeoutMilliseconds: Int32 = 5_000) {
        self.path = path
        self.busyTimeoutMilliseconds = busyTimeoutMilliseconds
    }

    /// Runs `body` with a connection that sees everything committed before it started.
    public func read<T>(_ body: (Connection) throws -> T) throws -> T {
        lock.lock()
        let borrowed = idle.popLast()
        lock.unlock()
        let connection = try borrowed ?? openReader()
        defer {
            if !closed.load(ordering: .acquiring) {
                lock.lock()
                idle.append(connection)
                lock.unlock()
            }
        }
        return try connection.lent { try body(connection) }
    }

    private func openReader() throws(SQLiteError) -> Connection {
        let connection = try Connection(path: path, busyTimeoutMilliseconds: busyTimeoutMilliseconds)
        try connection.executeScript("PRAGMA query_only = ON; PRAGMA foreign_keys = ON; PRAGMA cache_size = -8000;")
        return connection
    }

    /// Closes the idle connections; those still borrowed close when returned.
    public func close() {
        closed.store(true, ordering: .releasing)
        lock.lock()
        defer { lock.unlock() }
        for connection in idle { connection.close() }
        idle.removeAll()
    }
}

