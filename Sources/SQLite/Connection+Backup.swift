import CSQLite
import Glibc

extension Connection {
    /// Copies this connection's database into a new file at `path` through SQLite's online
    /// backup API, `pagesPerStep` pages at a time, so other connections (a running server)
    /// go on reading and writing meanwhile; returns the number of pages copied.
    ///
    /// The file is created 0600 before SQLite opens it (`createPrivateFile`), and never
    /// overwritten: an existing `path` is refused. A backup that fails removes what it wrote.
    ///
    /// The corresponding C functions are `sqlite3_backup_init`, `sqlite3_backup_step` and
    /// `sqlite3_backup_finish` (sqlite.org/c3ref/backup_finish.html). A step that finds the
    /// source locked (`SQLITE_BUSY`, `SQLITE_LOCKED`) is retried after a short pause. A write
    /// through another connection makes the next step start over, so under a busy writer
    /// the copy could start over for ever: after `restartsBeforeOneStep` restarts the rest
    /// is copied in one step, which reads one snapshot (in WAL mode that holds no writer up).
    /// - Throws: `SQLiteError`, naming `path`.
    @discardableResult
    public func backup(to path: String, pagesPerStep: Int32 = 256, restartsBeforeOneStep: Int = 3) throws(SQLiteError) -> Int32 {
        assertOnLeaseHolder()
        precondition(pagesPerStep > 0, "a backup step copies at least one page")
        guard try Connection.createPrivateFile(at: path) else {
            throw SQLiteError(code: SQLITE_CANTOPEN, message: "\(path) exists: a backup never overwrites a file")
        }
        do {
            let destination = try Connection(path: path)
            defer { destination.close() }
            return try copyPages(into: destination, pagesPerStep: pagesPerStep, restartsBeforeOneStep: restartsBeforeOneStep)
        } catch {
            unlink(path)
            throw error
        }
    }

    private func copyPages(into destination: Connection, pagesPerStep: Int32,
                           restartsBeforeOneStep: Int) throws(SQLiteError) -> Int32 {
        guard let backup = sqlite3_backup_init(destination.handle, "main", handle, "main") else {
            throw SQLiteError(code: sqlite3_errcode(destination.handle),
                              message: "cannot start a backup into \(destination.path): \(destination.lastErrorMessage)")
        }
        var restarts = 0
        var lastRemaining = Int32.max
        var stepFailure: Int32 = SQLITE_OK
        stepping: while true {
            let pages = restarts >= restartsBeforeOneStep ? -1 : pagesPerStep
            let code = sqlite3_backup_step(backup, pages)
            switch code & 0xFF {
            case SQLITE_DONE:
                break stepping
            case SQLITE_OK:
                let remaining = sqlite3_backup_remaining(backup)
                if remaining > lastRemaining { restarts += 1 }
                lastRemaining = remaining
            case SQLITE_BUSY, SQLITE_LOCKED:
                usleep(10_000)
            default:
                stepFailure = code
                break stepping
            }
        }
        let pageCount = sqlite3_backup_pagecount(backup)
        // Finish reports the step's error too, and releases the backup whatever happened.
        let finished = sqlite3_backup_finish(backup)
        guard stepFailure == SQLITE_OK, finished == SQLITE_OK else {
            let code = stepFailure == SQLITE_OK ? finished : stepFailure
            throw SQLiteError(code: code, message: "the backup into \(destination.path) failed: \(destination.lastErrorMessage)")
        }
        return pageCount
    }
}
