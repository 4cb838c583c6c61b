import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import GatePassClient
import GatePassCore

// What the History tab asks of the world. The shell backs it with the client core
// (`ClientCoreServices`, below); tests back it with a fake. Only plain values cross it.

/// Which scans the History tab asks for. Every field left nil matches everything.
public struct ScanHistoryFilter: Sendable, Equatable, Hashable {
    /// The first instant wanted (inclusive).
    public var from: Date?
    /// The last instant wanted. The server includes it (`scanned_at <= to`), so a screen that
    /// wants a half-open day asks up to the next midnight and drops that instant itself.
    public var to: Date?
    /// Only scans with this result.
    public var result: ScanResult?
    /// Only scans made at this checkpoint.
    public var checkpointId: String?

    public init(from: Date? = nil, to: Date? = nil, result: ScanResult? = nil, checkpointId: String? = nil) {
        self.from = from; self.to = to; self.result = result; self.checkpointId = checkpointId
    }
}

/// The scans that matched a filter, newest first, up to a cap.
public struct ScanLog: Sendable, Equatable {
    public var scans: [Scan]
    /// True when more scans matched than the cap let through (the oldest are missing).
    public var isCapped: Bool

    public init(scans: [Scan], isCapped: Bool) { self.scans = scans; self.isCapped = isCapped }
}

/// What became of a CSV export.
public enum CSVExportOutcome: Sendable, Equatable {
    /// The file was written (mode 0600) with `rows` scans, not counting the header.
    case saved(rows: Int, path: String)
    /// A file is already there and overwriting was not asked for: nothing was fetched or written.
    case fileExists(path: String)
}

/// The calls the History tab makes (OWNER/ADMIN: the organization's scan log).
///
/// Every call blocks and is made from the console's one UI thread. Failures are
/// `ConsoleError`s, already sorted into what a person can act on.
public protocol HistoryServices: AnyObject {
    /// Every scan matching `filter`, newest first, following the server's pages until none
    /// is left or `limit` scans were read (then `isCapped` says so). Offline, the answer for
    /// the same filter from the cache (`fromCache`, and `updatedAt` says how old).
    /// - Throws: `.offline` when the server cannot be reached and nothing is cached for this filter.
    func scanHistory(filter: ScanHistoryFilter, limit: Int) throws(ConsoleError) -> ConsoleRead<ScanLog>

    /// The server's CSV export of the scans matching `filter` (no offline fallback: an
    /// export must be the server's current truth).
    func scanHistoryCSV(filter: ScanHistoryFilter) throws(ConsoleError) -> String

    /// Fetches the CSV for `filter` and writes it to `path` with mode 0600 (scan logs are
    /// personal data).
    /// - Parameters:
    ///   - path: an absolute path; `~` is the screen's business, not this call's.
    ///   - overwrite: replace a file that is already there. Without it an existing file is
    ///     answered with `.fileExists` before anything is fetched.
    /// - Throws: `.refused` for a path that cannot be used (missing folder, no permission, a
    ///   folder, a symbolic link), the CSV call's errors, `.failed` when writing fails midway.
    func exportScanHistoryCSV(filter: ScanHistoryFilter, toPath path: String, overwrite: Bool) throws(ConsoleError) -> CSVExportOutcome

    /// The organization's checkpoint names by id, best effort: empty when unknown (the
    /// screen then shows a shortened id).
    func historyCheckpointNames() -> [String: String]

    /// Names of the visitors with these ids, best effort: ids it cannot name are left out
    /// (scans carry the visitor's id, not the name).
    func historyVisitorNames(ids: Set<String>) -> [String: String]
}

// MARK: - Backed by the client core

extension ClientCoreServices: HistoryServices {
    /// The API's page size limit (api.md "Lists": max 500).
    static let historyPageSize = 500
    /// How long a visitor-name lookup is trusted before names are fetched again for ids it
    /// did not know (so an old day's unknown ids do not cost a request on every reload).
    static let visitorNamesRefresh: TimeInterval = 60
    /// Most names kept in the cache.
    static let visitorNamesKept = 5_000

    /// What the cache keeps of one history read (ScanLog itself is not Codable).
    private struct CachedScanLog: Codable {
        var scans: [Scan]
        var isCapped: Bool
    }

    public func scanHistory(filter: ScanHistoryFilter, limit: Int) throws(ConsoleError) -> ConsoleRead<ScanLog> {
        let limit = max(1, limit)
        let cacheKey = Self.historyCacheKey(filter)
        do throws(ClientError) {
            let session = try core.session(on: nil)
            let api = APIClient(baseURL: session.server, transport: transport)
            // Same choice as ClientCore.history: organization readers use their login token.
            let token = session.user.role.managesOrganization || session.user.role == .platformAdmin
                ? session.token : session.scanner?.scannerToken ?? session.token
            do throws(ClientError) {
                var scans: [Scan] = []
                var cursor: String?
                repeat {
                    let page = try api.scanHistory(token: token, filter: filter.apiFilter,
                                                   limit: min(Self.historyPageSize, limit - scans.count), cursor: cursor)
                    scans += page.items
                    cursor = page.nextCursor
                    // An empty page with a cursor would loop forever on a confused server.
                    if page.items.isEmpty { cursor = nil }
                } while cursor != nil && scans.count < limit
                let log = CachedScanLog(scans: Array(scans.prefix(limit)), isCapped: cursor != nil || scans.count > limit)
                let now = clock.now()
                try? core.store.cache(cacheKey, value: CanonicalJSON.encode(log), at: now)
                return ConsoleRead(value: ScanLog(scans: log.scans, isCapped: log.isCapped), updatedAt: now, fromCache: false)
            } catch {
                guard error.isRetryable, let cached = try core.store.cached(cacheKey),
                      let log = try? JSONDecoder().decode(CachedScanLog.self, from: Data(cached.value))
                else { throw error }
                return ConsoleRead(value: ScanLog(scans: log.scans, isCapped: log.isCapped), updatedAt: cached.updatedAt,
                                   fromCache: true)
            }
        } catch {
            throw Self.consoleError(error, retryAfter: nil)
        }
    }

    /// One cache entry per filter, so each day looked at online can be looked at again offline.
    static func historyCacheKey(_ filter: ScanHistoryFilter) -> String {
        let parts = [filter.from.map { Timestamp($0).description } ?? "", filter.to.map { Timestamp($0).description } ?? "",
                     filter.result?.rawValue ?? "", filter.checkpointId ?? ""]
        return "console_history:" + parts.joined(separator: "|")
    }

    public func scanHistoryCSV(filter: ScanHistoryFilter) throws(ConsoleError) -> String {
        do {
            return try core.historyCSV(filter: filter.apiFilter)
        } catch {
            throw Self.consoleError(error, retryAfter: nil)
        }
    }

    public func exportScanHistoryCSV(filter: ScanHistoryFilter, toPath path: String,
                                     overwrite: Bool) throws(ConsoleError) -> CSVExportOutcome {
        // Checked before the download: a refusal should not cost a 100,000-row export.
        if try PrivateFile.check(path) == .exists, !overwrite { return .fileExists(path: path) }
        let csv = try scanHistoryCSV(filter: filter)
        guard try PrivateFile.write(Array(csv.utf8), to: path, overwrite: overwrite) else { return .fileExists(path: path) }
        return .saved(rows: PrivateFile.csvRowCount(csv), path: path)
    }

    public func historyCheckpointNames() -> [String: String] {
        let cacheKey = "console_checkpoints"
        var checkpoints: [Checkpoint] = []
        if let session = try? core.session(on: nil),
           let page = try? APIClient(baseURL: session.server, transport: transport).checkpoints(token: session.token) {
            checkpoints = page.items
            try? core.store.cache(cacheKey, value: CanonicalJSON.encode(checkpoints), at: clock.now())
        } else if let cached = try? core.store.cached(cacheKey),
                  let decoded = try? JSONDecoder().decode([Checkpoint].self, from: Data(cached.value)) {
            checkpoints = decoded
        }
        return Dictionary(checkpoints.map { ($0.id, $0.name) }, uniquingKeysWith: { first, _ in first })
    }

    public func historyVisitorNames(ids: Set<String>) -> [String: String] {
        guard !ids.isEmpty else { return [:] }
        let cacheKey = "console_visitor_names"
        let cached = try? core.store.cached(cacheKey)
        var names = cached.flatMap { try? JSONDecoder().decode([String: String].self, from: Data($0.value)) } ?? [:]
        let missing = ids.subtracting(names.keys)
        let stale = cached.map { clock.now().timeIntervalSince($0.updatedAt) >= Self.visitorNamesRefresh } ?? true
        // One page of the newest visitors names most of a recent scan log in one request;
        // older visitors stay unnamed rather than costing a request each.
        if !missing.isEmpty, stale, let session = try? core.session(on: nil), session.user.role.managesOrganization {
            let api = APIClient(baseURL: session.server, transport: transport)
            if let page = try? api.visitors(token: session.token, limit: Self.historyPageSize) {
                var fetched: [String: String] = [:]
                for visitor in page.items { fetched[visitor.id] = visitor.name }
                names.merge(fetched) { _, new in new }
                if names.count > Self.visitorNamesKept {
                    names = fetched.merging(names.filter { ids.contains($0.key) }) { new, _ in new }
                }
            }
            // Stamped even when the request failed, so an unreachable server is not asked on every reload.
            try? core.store.cache(cacheKey, value: CanonicalJSON.encode(names), at: clock.now())
        }
        return names.filter { ids.contains($0.key) }
    }
}

extension ScanHistoryFilter {
    var apiFilter: APIClient.HistoryFilter {
        APIClient.HistoryFilter(from: from, to: to, result: result, checkpointId: checkpointId)
    }
}

// MARK: - Writing a private file

/// Writes files that hold personal data: created with mode 0600, never through a symbolic
/// link, never over an existing file unless asked, and with errors a person can act on.
///
/// The corresponding C functions are `open(2)` (`O_EXCL`, `O_NOFOLLOW`), `write(2)`,
/// `fsync(2)` and `rename(2)`.
enum PrivateFile {
    enum State: Equatable { case absent, exists }

    /// Whether `path` can be written: its folder exists and it is not a folder itself.
    /// - Throws: `.refused` with what is wrong.
    static func check(_ path: String) throws(ConsoleError) -> State {
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
    static func write(_ bytes: [UInt8], to path: String, overwrite: Bool) throws(ConsoleError) -> Bool {
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
