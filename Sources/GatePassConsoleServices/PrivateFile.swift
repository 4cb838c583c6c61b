import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import GatePassConsole

/// Writes files that hold personal data (the console's exports, `gatepass visitor pass`):
/// created with mode 0600, never through a symbolic link, never over an existing file unless
/// asked, and with errors a person can act on.
///
/// The corresponding C functions are `open(2)` (`O_EXCL`, `O_NOFOLLOW`), `write(2)`,
/// `fsync(2)` and `rename(2)`.
public enum PrivateFile {
    public enum State: Equatable { case absent, exists }

    /// Whether `path` can be written: its folder exists and it is not a folder itself.
    /// - Throws: `.refused` with what is wrong.
    public static func check(_ path: String) throws(ConsoleError) -> State {
        guard path.hasPrefix("/") else { throw .refused("the path must start with / (it was \(path))") }
        guard !path.hasSuffix("/") else { throw .refused("\(path) is a folder; add a file name") }
        let folder = (path as NSString).deletingLastPathComponent
        var info = stat()
        if stat(folder, &info) != 0 {
            throw refusal(errno, folder: folder, path: path)
        }
        guard info.st_mode & S_IFMT == S_IFDIR else { throw .refused("\(folder) is not a folder") }
        if lstat(path, &info) != 0 {
            if errno == ENOENT { return .absent }
            throw refusal(errno, folder: folder, path: path)
        }
        switch info.st_mode & S_IFMT {
        case S_IFDIR: throw .refused("\(path) is a folder; add a file name")
        case S_IFLNK: throw .refused("\(path) is a symbolic link; type the path of the file itself")
        default: return .exists
        }
    }

    /// Writes `bytes` to `path` with mode 0600.
    /// - Returns: false when `overwrite` is off and a file appeared there (nothing written).
    /// - Throws: `.refused` for a path that cannot be used, `.failed` when writing fails
    ///   (a file this call created is removed again; an overwritten one is left as it was).
    public static func write(_ bytes: [UInt8], to path: String, overwrite: Bool) throws(ConsoleError) -> Bool {
        if try check(path) == .exists, !overwrite { return false }
        let folder = (path as NSString).deletingLastPathComponent
        // Overwriting goes through a temporary file and rename, so a failure midway leaves
        // the old file whole; a new file is created exclusively, so a race never clobbers.
        let target = overwrite ? folder + "/.gatepass-export-\(UUID().uuidString).tmp" : path
        let descriptor = open(target, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else {
            if errno == EEXIST && !overwrite { return false }
            throw refusal(errno, folder: folder, path: path)
        }
        var failure: ConsoleError?
        // The umask may only narrow 0600, but say it exactly.
        if fchmod(descriptor, 0o600) != 0 { failure = .failed("cannot make \(path) private: \(describe(errno))") }
        var offset = 0
        while failure == nil, offset < bytes.count {
            let written = bytes[offset...].withUnsafeBytes { systemWrite(descriptor, $0.baseAddress, $0.count) }
            if written < 0 {
                if errno == EINTR { continue }
                failure = .failed("writing \(path) failed: \(describe(errno))")
            } else {
                offset += written
            }
        }
        if failure == nil, fsync(descriptor) != 0 { failure = .failed("writing \(path) failed: \(describe(errno))") }
        if close(descriptor) != 0, failure == nil { failure = .failed("writing \(path) failed: \(describe(errno))") }
        if failure == nil, overwrite, rename(target, path) != 0 {
            failure = .failed("cannot replace \(path): \(describe(errno))")
        }
        if let failure {
            unlink(target)
            throw failure
        }
        return true
    }

    static func refusal(_ code: Int32, folder: String, path: String) -> ConsoleError {
        switch code {
        case ENOENT, ENOTDIR: .refused("the folder \(folder) does not exist; create it or choose another")
        case EACCES, EPERM: .refused("no permission to write \(path); choose a folder of yours")
        case EROFS: .refused("\(folder) is on a read-only file system")
        case ELOOP: .refused("\(path) is a symbolic link; type the path of the file itself")
        case EISDIR: .refused("\(path) is a folder; add a file name")
        case ENAMETOOLONG: .refused("the path is too long")
        default: .failed("cannot write \(path): \(describe(code))")
        }
    }

    /// `write(2)`, named apart from this type's own `write`.
    private static func systemWrite(_ descriptor: Int32, _ buffer: UnsafeRawPointer?, _ count: Int) -> Int {
        #if canImport(Glibc)
        Glibc.write(descriptor, buffer, count)
        #else
        Darwin.write(descriptor, buffer, count)
        #endif
    }

    static func describe(_ code: Int32) -> String { String(cString: strerror(code)) }

    /// Rows of an RFC 4180 CSV after the header; line breaks inside quoted cells do not count.
    static func csvRowCount(_ csv: String) -> Int {
        var lines = 0
        var quoted = false
        var lineHasText = false
        for scalar in csv.unicodeScalars {
            switch scalar {
            case "\"": quoted.toggle(); lineHasText = true
            case "\n" where !quoted:
                if lineHasText { lines += 1 }
                lineHasText = false
            case "\r" where !quoted: break
            default: lineHasText = true
            }
        }
        if lineHasText { lines += 1 }
        return max(0, lines - 1)
    }
}
