import Foundation
import GatePassCore

// What the History tab asks of the world. The shell backs it with the client core
// (`ClientCoreServices`, in GatePassConsoleServices); tests back it with a fake. Only plain
// values cross it.

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

    /// The organization (its name and time zone), from the server or, offline, from the cache.
    /// - Throws: `.offline` when neither can answer.
    func site() throws(ConsoleError) -> ConsoleRead<Organization>

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
