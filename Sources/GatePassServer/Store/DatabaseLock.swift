import Foundation

/// The one serving process of a SQLite file: an exclusive `flock` on `<db>.lock` beside the
/// file's real path (symbolic links and `..` resolved, so two names of one file take one lock).
///
/// Two servers on one SQLite file would each run the daily retention, the end-of-day
/// check-out and the audit head as if alone. The kernel drops an `flock` when its last file
/// descriptor closes — at `release`, or when the process dies however it dies — so a `kill -9`
/// leaves nothing to clean up, and a stale lock file is harmless (only a held lock refuses).
/// The `--db` commands never take it: they are short and meant to run beside the server.
/// The corresponding C function is `flock(2)`.
public final class DatabaseLock: @unchecked Sendable {
    /// The lock file's descriptor while the lock is held; -1 after `release`. Used from the
    /// thread that starts and stops the server only.
    private var descriptor: Int32
    /// The database's real path, as messages name it.
    public let databasePath: String

    /// Takes the lock of the SQLite file at `path` (which need not exist yet).
    /// - Throws: `ConfigurationError` when another process (or another server in this one) holds it,
    ///   or the lock file cannot be opened.
    public init(databaseAt path: String) throws(ConfigurationError) {
        databasePath = Self.realPath(of: path)
        let lockPath = databasePath + ".lock"
        // O_CLOEXEC: a child process (the OTP delivery program) must not inherit the lock.
        let opened = open(lockPath, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard opened >= 0 else {
            throw ConfigurationError(message: "cannot open the lock file \(lockPath) (\(String(cString: strerror(errno)))); check the folder's permissions")
        }
        var result: Int32
        repeat { result = flock(opened, LOCK_EX | LOCK_NB) } while result != 0 && errno == EINTR
        guard result == 0 else {
            let code = errno
            close(opened)
            if code == EWOULDBLOCK {
                throw ConfigurationError(message: "the database \(databasePath) is in use: another gatepass serve holds it (\(lockPath)); stop that server first, or give this one another --db")
            }
            throw ConfigurationError(message: "cannot lock \(lockPath) (\(String(cString: strerror(code))))")
        }
        descriptor = opened
    }

    /// Gives the lock back (closing the descriptor releases it). Calling it twice is harmless.
    public func release() {
        guard descriptor >= 0 else { return }
        close(descriptor)
        descriptor = -1
    }

    deinit { release() }

    /// `path` with every symbolic link and `.`/`..` resolved: the file's own real path, or for
    /// a file not made yet, its folder's real path and its name.
    static func realPath(of path: String) -> String {
        let absolute = path.hasPrefix("/") ? path : FileManager.default.currentDirectoryPath + "/" + path
        if let resolved = realpath(absolute, nil) {
            defer { free(resolved) }
            return String(cString: resolved)
        }
        let url = URL(fileURLWithPath: absolute)
        let folder = url.deletingLastPathComponent().path
        guard let resolvedFolder = realpath(folder, nil) else { return url.standardizedFileURL.path }
        defer { free(resolvedFolder) }
        let base = String(cString: resolvedFolder)
        return (base == "/" ? "" : base) + "/" + url.lastPathComponent
    }
}
