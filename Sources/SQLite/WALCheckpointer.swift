import CSQLite
import Foundation

/// Checkpoints a WAL-mode database on a thread and connection of its own, so the writer
/// copies only what that thread left, and only when the WAL must start again.
///
/// Why: SQLite's automatic checkpoint runs inside the commit that pushed the WAL past 1,000
/// pages, on the writing connection: it syncs the WAL, copies the pages into the database and
/// syncs that, and every write waits meanwhile (issue 15's profile: an eighth of the writer's
/// time under check-ins). Here the writer's commit hook counts the WAL's pages and wakes
/// this thread, which runs a PASSIVE checkpoint — one that never blocks a writer or a reader —
/// with the sync rules of its own connection's `synchronous` mode.
///
/// A WAL starts again from its beginning only when a write begins after a checkpoint copied
/// *every* frame. Under writes that never pause, this thread cannot get there: by the time
/// its checkpoint ends, the writer has appended more, so the WAL grew without bound (seen
/// under the bench's check-ins: 295 MB after 40 s, and every page the writer's cache missed
/// was looked up through all of it). So at `restartLimit` pages the writer's hook copies what
/// is left itself, on its own connection, right after its commit — little, as this thread
/// has copied the rest — and the writer's next transaction starts the WAL again.
///
/// After an erase, `truncate()` asks this thread for a TRUNCATE checkpoint, which copies every
/// frame and empties the WAL file, so no older version of an erased row stays in it. It never
/// waits for a lock: a checkpoint that waits for a reader also holds every writer back
/// meanwhile (a writer waited 4.7 s behind one), so a reader or writer in the way makes it
/// answer `.busy` at once, and the caller tries again later.
///
/// A checkpoint that fails for another reason than a lock (the database file made immutable
/// or read-only while the server runs, an I/O error) is reported to `onFailure`: the writes
/// go on into the WAL meanwhile, but they can no longer reach the database file.
public final class WALCheckpointer: @unchecked Sendable {
    // @unchecked: `connection` is used only on the checkpointing thread, and by nothing after
    // `stop` has joined it; `pagesWaiting`, `stopping`, `checkpoints`, `running`,
    // `writerWaiting`, `catchUps` and the truncation counts are guarded by `condition`.
    private let connection: Connection
    private let path: String
    private let onFailure: @Sendable (SQLiteError) -> Void
    private let threshold: Int32
    private let restartLimit: Int32
    private let condition = NSCondition()
    private var pagesWaiting: Int32 = 0
    private var stopping = false
    private var checkpoints = 0
    /// True while this thread runs a checkpoint (the writer's catch-up waits for none).
    private var running = false
    /// The writer found the WAL past `restartLimit` while this thread was running: it starts
    /// no new checkpoint until the writer has caught up, so the writer's turn always comes.
    private var writerWaiting = false
    private var catchUps = 0
    /// Calls of `truncate()` so far, and how many of them an attempt has answered (with
    /// `lastTruncation`, the outcome of an attempt that began after each of them).
    private var truncationsAsked = 0
    private var truncationsAnswered = 0
    private var lastTruncation = TruncationOutcome.stopped
    private let finished = DispatchSemaphore(value: 0)

    /// What a `truncate()` attempt came to.
    public enum TruncationOutcome: Sendable {
        /// Every frame is in the database file and the WAL file is empty.
        case truncated
        /// A reader on an older snapshot, or a writer, was in the way: try again later.
        case busy
        /// The checkpoint failed (also reported to `onFailure`).
        case failed(SQLiteError)
        /// The checkpointer is stopping (the writer's close truncates the WAL itself).
        case stopped
    }

    /// Opens the checkpointing connection and starts its thread.
    /// - Parameters:
    ///   - path: the database file, already in WAL mode.
    ///   - synchronous: the `synchronous` mode of the checkpointing connection (NORMAL and FULL
    ///     both sync the WAL before a checkpoint and the database after it).
    ///   - threshold: the WAL size, in pages, at which a checkpoint is started (SQLite's own
    ///     automatic checkpoint uses 1,000).
    ///   - restartLimit: the WAL size, in pages, at which the writer copies what is left
    ///     itself so that the WAL starts again (see above); 4,000 pages of 4 KiB are 16 MiB.
    ///   - onFailure: told of every checkpoint (this thread's or the writer's catch-up) that
    ///     failed for another reason than a lock; on the thread that ran it.
    public init(path: String, synchronous: String, threshold: Int32 = 1_000, restartLimit: Int32 = 4_000,
                onFailure: @escaping @Sendable (SQLiteError) -> Void = { _ in }) throws {
        // A busy timeout of 0: this connection never waits for another's lock (see above).
        connection = try Connection(path: path, busyTimeoutMilliseconds: 0)
        self.path = path
        self.onFailure = onFailure
        self.threshold = threshold
        self.restartLimit = restartLimit
        try connection.executeScript("PRAGMA synchronous = \(synchronous)")
        let thread = Thread { [unowned self] in self.run() }
        thread.name = "sqlite-checkpt"
        thread.start()
    }

    /// Makes `writer` hand its checkpoints to this thread: its commit hook wakes the thread
    /// when the WAL has reached the threshold. SQLite's own automatic checkpoint is a commit
    /// hook too, so setting this one turns that off. Call it on the thread `writer` is lent to
    /// (or before lending it).
    public func takeCheckpoints(from writer: Connection) {
        let context = Unmanaged.passUnretained(self)
        sqlite3_wal_hook(writer.handle, { context, writer, _, pages in
            guard let context else { return SQLITE_OK }
            Unmanaged<WALCheckpointer>.fromOpaque(context).takeUnretainedValue().walGrew(to: pages, writer: writer)
            return SQLITE_OK
        }, context.toOpaque())
    }

    /// How many times the writer copied the rest of the WAL itself (for tests and diagnostics).
    public var writerCatchUps: Int {
        condition.lock()
        defer { condition.unlock() }
        return catchUps
    }

    /// How many checkpoints have run so far (for tests and diagnostics).
    public var completedCheckpoints: Int {
        condition.lock()
        defer { condition.unlock() }
        return checkpoints
    }

    /// Returns once a checkpoint that started after this call has finished (tests).
    public func waitForCheckpoint(after count: Int, timeout: TimeInterval) -> Bool {
        let deadline = Date(timeIntervalSinceNow: timeout)
        condition.lock()
        defer { condition.unlock() }
        while checkpoints <= count {
            if !condition.wait(until: deadline) { return checkpoints > count }
        }
        return true
    }

    /// On the writer's thread, in its commit, with `pages` the WAL's frames since it last started.
    private func walGrew(to pages: Int32, writer: OpaquePointer?) {
        if pages >= restartLimit {
            catchUp(writer: writer)
        } else if pages >= threshold {
            condition.lock()
            pagesWaiting = pages
            condition.broadcast()
            condition.unlock()
        }
    }

    /// The writer's own PASSIVE checkpoint, when this thread is idle; otherwise the next
    /// commit tries again (this thread starts nothing new meanwhile). A reader still on old
    /// frames can keep it short of the end; the commits after try again. SQLite syncs the WAL
    /// before copying and the database after, as for any checkpoint of this mode.
    private func catchUp(writer: OpaquePointer?) {
        condition.lock()
        if running {
            writerWaiting = true
            condition.unlock()
            return
        }
        running = true
        condition.unlock()
        let code = sqlite3_wal_checkpoint_v2(writer, nil, SQLITE_CHECKPOINT_PASSIVE, nil, nil)
        if let failure = failure(code, message: writer.map { String(cString: sqlite3_errmsg($0)) }) { onFailure(failure) }
        condition.lock()
        running = false
        writerWaiting = false
        catchUps += 1
        condition.broadcast()
        condition.unlock()
    }

    /// Attempts a TRUNCATE checkpoint on this thread, without waiting for any lock, and
    /// returns its outcome: after an erase, no older version of a changed page may stay in the
    /// WAL. Waits only for a checkpoint this thread is running already (a bounded copy, never
    /// a lock). The corresponding C call is `sqlite3_wal_checkpoint_v2(…, SQLITE_CHECKPOINT_TRUNCATE, …)`
    /// on a connection without a busy handler, which answers `SQLITE_BUSY` at once where a
    /// reader or writer is in the way.
    public func truncate() -> TruncationOutcome {
        condition.lock()
        defer { condition.unlock() }
        guard !stopping else { return .stopped }
        truncationsAsked += 1
        let ticket = truncationsAsked
        condition.broadcast()
        while truncationsAnswered < ticket { condition.wait() }
        return lastTruncation
    }

    /// The failure to report for a checkpoint's result code, if any: a lock in the way is
    /// no failure (the next checkpoint does the rest).
    private func failure(_ code: Int32, message: String?) -> SQLiteError? {
        let primary = code & 0xFF
        guard code != SQLITE_OK, primary != SQLITE_BUSY, primary != SQLITE_LOCKED else { return nil }
        return SQLiteError(code: code, message: "a checkpoint of \(path) failed: \(message ?? "code \(code)")")
    }

    private func run() {
        connection.lent {
            while true {
                condition.lock()
                // A truncation does not wait for the writer's catch-up: it copies everything
                // the catch-up would have (and the writer may not commit again for a while).
                while (truncationsAsked == truncationsAnswered && (pagesWaiting == 0 || writerWaiting) || running) && !stopping {
                    condition.wait()
                }
                if stopping {
                    lastTruncation = .stopped
                    truncationsAnswered = truncationsAsked
                    condition.broadcast()
                    condition.unlock()
                    break
                }
                let answering = truncationsAsked
                let truncating = answering > truncationsAnswered
                pagesWaiting = 0
                running = true
                condition.unlock()
                // A partial checkpoint (a reader still on old pages) is finished by the next
                // one; the WAL stays consistent whatever happens here.
                let mode = truncating ? SQLITE_CHECKPOINT_TRUNCATE : SQLITE_CHECKPOINT_PASSIVE
                let code = sqlite3_wal_checkpoint_v2(connection.handle, nil, mode, nil, nil)
                let failure = failure(code, message: connection.lastErrorMessage)
                if let failure { onFailure(failure) }
                condition.lock()
                running = false
                checkpoints += 1
                if truncating {
                    lastTruncation = if let failure { .failed(failure) } else if code == SQLITE_OK { .truncated } else { .busy }
                    truncationsAnswered = answering
                    // An emptied WAL leaves the writer nothing to catch up on.
                    if code == SQLITE_OK { writerWaiting = false }
                }
                condition.broadcast()
                condition.unlock()
            }
            connection.close()
        }
        finished.signal()
    }

    /// Stops the thread and closes its connection; call it before the writer's own close (which
    /// checkpoints what is left). The writer's hook must not outlive this object: close the
    /// writer's connection, or stop writing through it, first or right after.
    public func stop() {
        condition.lock()
        let wasStopping = stopping
        stopping = true
        condition.broadcast()
        condition.unlock()
        guard !wasStopping else { return }
        finished.wait()
    }
}
