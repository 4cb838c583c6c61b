import Foundation

/// The one check of a server state file's permissions — the secret, the pass keys, and for
/// `serve` the SQLite database with its WAL and shm: a file that its group or others may use
/// in any way is refused, naming the file, its mode and the `chmod` that fixes it.
enum PrivateFileMode {
    /// - Parameters:
    ///   - status: the file's `stat` (taken through the open descriptor where there is one, so
    ///     the file checked is the file read).
    ///   - what: what the file is, for the message ("the secret file").
    ///   - advice: what else to do after the `chmod`, a clause beginning with its separator.
    /// - Throws: `ConfigurationError` when any group or other permission bit is set.
    static func check(_ status: stat, path: String, what: String, advice: String = "") throws(ConfigurationError) {
        if let problem = problem(status, path: path) {
            throw ConfigurationError(message: "\(what) \(path) \(problem)\(advice)")
        }
    }

    /// What is wrong with a file of `status`, after its name (`has mode 644: …; run chmod 600
    /// PATH`); nil when its group and others have no permission. For the errors of layers that
    /// name the file their own way (the audit head).
    static func problem(_ status: stat, path: String) -> String? {
        let permissions = status.st_mode & 0o777
        guard permissions & 0o077 != 0 else { return nil }
        return "has mode \(String(permissions, radix: 8)): its group or others may read or write it; run chmod 600 \(path)"
    }

    /// `check` for a file named by path, when it exists (`stat`, so a symbolic link is judged
    /// by the file it leads to).
    /// - Throws: `ConfigurationError` for a shared file, or one that exists but cannot be examined.
    static func checkIfPresent(path: String, what: String, advice: String = "") throws(ConfigurationError) {
        var status = stat()
        guard stat(path, &status) == 0 else {
            if errno == ENOENT { return }
            throw ConfigurationError(message: "cannot examine \(what) \(path): \(String(cString: strerror(errno)))")
        }
        try check(status, path: path, what: what, advice: advice)
    }
}
