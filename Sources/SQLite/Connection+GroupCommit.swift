import Foundation
import SQLBinding

/// SQLite's connection as the group-commit writer's: `BEGIN IMMEDIATE` takes the file's write
/// lock for the batch, and closing checkpoints the WAL into the main file.
extension Connection: GroupCommitConnection {
    public func beginBatch() throws { try execute("BEGIN IMMEDIATE") }
    public func commitBatch() throws { try execute("COMMIT") }
    public func rollbackBatch() { _ = try? execute("ROLLBACK") }
    public var isInTransaction: Bool { !isAutocommit }
    /// A local file does not break the way a network connection does: nothing to reopen.
    public func recoverAfterFailure() {}
    public func closeAfterWriting() {
        try? executeScript("PRAGMA wal_checkpoint(TRUNCATE)")
        close()
    }
    public static var writerClosing: any Error { SQLiteError.writerClosing }
    public static var jobLeftTransactionOpen: any Error {
        SQLiteError(code: 21 /* SQLITE_MISUSE */, message: "a job left a transaction open")
    }
}

extension GroupCommitWriter where Connection == SQLite.Connection {
    /// Throws unless the database can be written now: the writer takes the write lock and
    /// gives it back (`BEGIN IMMEDIATE; ROLLBACK`), waiting its turn like any write. A
    /// read-only database (SQLITE_READONLY), another process holding the lock past the busy
    /// timeout (SQLITE_BUSY) or an unreadable file fail it; nothing is written.
    public func probeWritable() throws {
        try outsideTransaction { connection in
            try connection.execute("BEGIN IMMEDIATE")
            try connection.execute("ROLLBACK")
        }
    }

}
