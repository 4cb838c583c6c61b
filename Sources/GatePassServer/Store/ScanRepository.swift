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
protocol ScanRepository {
    func insert(_ scan: Scan, organizationId: String) throws
    /// Up to `limit` scans matching `filter` after `cursor`, each with its position.
    func page(_ filter: ScanHistoryFilter, after cursor: ListCursor?, limit: Int) throws -> [(scan: Scan, seq: Int64)]
}

extension ListCursor {
    /// Where the scan page after `row` starts.
    static func after(_ row: (scan: Scan, seq: Int64)) -> ListCursor {
        ListCursor(time: row.scan.scannedAt.date.milliseconds, seq: row.seq)
    }
}
