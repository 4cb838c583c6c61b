import Glibc

/// Makes a WAL-mode database's commits durable from outside SQLite: one `fdatasync` of its
/// `-wal` file covers every transaction whose commit has returned, however many.
///
/// Why: with `synchronous = NORMAL` a commit writes its frames into the WAL and returns
/// without syncing (checkpoints still sync the WAL before copying it and the database after,
/// so the file stays consistent through a power cut); syncing the WAL afterwards, on another
/// thread, gives the durability of `synchronous = FULL` without holding the writer during
/// the disk's flush (`GroupCommitWriter`'s sync stage).
///
/// The WAL is a file of its own only while a connection is open; SQLite may truncate it but
/// recreates it only after every connection closed. The descriptor is checked against the
/// path's inode on each sync and reopened when the file was replaced, and the folder is synced
/// when a WAL is first seen, so the new file's name is durable too (SQLite itself syncs the
/// folder at the first sync of a new WAL, which this mode no longer asks SQLite for).
///
/// `@unchecked Sendable`: only one thread calls `sync` (the writer's sync stage).
public final class WALFileSync: @unchecked Sendable {
    public let walPath: String
    private let folder: String
    private var descriptor: Int32 = -1
    private var identity: (device: UInt, inode: UInt)?
    /// How many syncs have succeeded (for tests and diagnostics).
    public private(set) var completedSyncs = 0
    /// The inode of the WAL file last synced (for tests).
    public var syncedInode: UInt? { identity?.inode }

    public init(databasePath: String) {
        walPath = databasePath + "-wal"
        let slash = databasePath.lastIndex(of: "/")
        folder = slash.map { String(databasePath[..<$0]).isEmpty ? "/" : String(databasePath[..<$0]) } ?? "."
    }

    deinit {
        if descriptor >= 0 { Glibc.close(descriptor) }
    }

    /// Every transaction committed before this call is on the disk when it returns.
    /// - Throws: `SQLiteError` (SQLITE_IOERR) when the WAL cannot be opened or synced.
    public func sync() throws {
        var status = stat()
        guard stat(walPath, &status) == 0 else { throw failure("stat") }
        let current = (device: UInt(status.st_dev), inode: UInt(status.st_ino))
        if descriptor < 0 || identity.map({ $0 != current }) ?? true {
            if descriptor >= 0 { Glibc.close(descriptor) }
            descriptor = Glibc.open(walPath, O_RDONLY | O_CLOEXEC)
            guard descriptor >= 0 else { throw failure("open") }
            identity = current
            try syncFolder()
        }
        guard fdatasync(descriptor) == 0 else { throw failure("fdatasync") }
        completedSyncs += 1
    }

    private func syncFolder() throws {
        let folderDescriptor = Glibc.open(folder, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard folderDescriptor >= 0 else { throw failure("open the folder of") }
        defer { Glibc.close(folderDescriptor) }
        guard fsync(folderDescriptor) == 0 else { throw failure("fsync the folder of") }
    }

    private func failure(_ what: String) -> SQLiteError {
        let reason = String(cString: strerror(errno))
        return SQLiteError(code: 10 /* SQLITE_IOERR */, message: "could not \(what) \(walPath): \(reason)")
    }
}
