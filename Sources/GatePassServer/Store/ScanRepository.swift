import Foundation
import GatePassCore

/// The scan history's filters, as the history and its CSV export share them.
struct ScanHistoryFilter: Sendable {
    /// nil only for PLATFORM_ADMIN reading every organization.
    var organizationId: String?
    var checkpointId: String?
    var from: Date?
    var to: Date?
    var result: ScanResult?
}

/// The scans: every check-in attempt, newest first (scan time, then insertion order).
/// A scan of the history export: the scan, the names its ids stand for, and its organization
/// (whose time zone its `scannedAtLocal` is in).
struct ExportedScan: Sendable {
    var named: NamedScan
    var organizationId: String
    var seq: Int64
}

protocol ScanRepository {
    /// - Parameter kioskId: the kiosk that scanned, when a kiosk did (its label names the scan's guard).
    func insert(_ scan: Scan, organizationId: String, kioskId: String?) throws
    /// Records what the kiosk decided offline on a scan the server had already answered
    /// (the replay of an attempt that reached it); false when no such scan exists.
    func setOfflineDecision(_ decision: ScanResult, scanId: String) throws -> Bool
    /// Up to `limit` scans matching `filter` after `cursor`, each with its position.
    func page(_ filter: ScanHistoryFilter, after cursor: ListCursor?, limit: Int) throws -> [(scan: Scan, seq: Int64)]
    /// `page` with the names of the visitor, gate and guard as they are stored now.
    func namedPage(_ filter: ScanHistoryFilter, after cursor: ListCursor?, limit: Int) throws -> [ExportedScan]

    // MARK: Retention

    /// Scans whose `raw` text is still kept, of the organization's visitors due for retention
    /// (pass ended before `cutoff`, not anonymised yet, not on site).
    func rawCount(ofVisitorsDue organizationId: String, endedBefore cutoff: Date) throws -> Int
    /// Erases the `raw` text of these visitors' scans; returns how many scans had one.
    func eraseRaw(visitorIds: [String]) throws -> Int
    /// Scans of no visitor (unknown codes, stray text) scanned before `cutoff` whose `raw` is kept.
    func unlinkedRawCount(organizationId: String, scannedBefore cutoff: Date) throws -> Int
    /// Erases their `raw` text; returns how many.
    func eraseUnlinkedRaw(organizationId: String, scannedBefore cutoff: Date) throws -> Int
    /// The scans of one visitor, oldest first, at most `limit` (a visitor's export).
    func scans(visitorId: String, limit: Int) throws -> [Scan]

    // MARK: Scans of unknown text

    /// Counts a scan of unknown text (no visitor) at `checkpointId` on its site-local `day`, in
    /// the gate's row of that day: true while fewer than `cap` were stored one by one that day
    /// (the caller stores this one), false beyond (it is only counted).
    func countUnknownScan(organizationId: String, checkpointId: String, day: LocalDay, cap: Int) throws -> Bool
    /// A gate's row of a day: scans of unknown text stored one by one, and counted only.
    func unknownScanDay(checkpointId: String, day: LocalDay) throws -> (stored: Int, counted: Int)?
}

extension ListCursor {
    /// Where the scan page after `row` starts.
    static func after(_ row: (scan: Scan, seq: Int64)) -> ListCursor {
        ListCursor(time: row.scan.scannedAt.date.milliseconds, seq: row.seq)
    }

    /// Where the export's page after `row` starts.
    static func after(_ row: ExportedScan) -> ListCursor { after((row.named.scan, row.seq)) }
}
