import Foundation
import GatePassCore
import SQLite

/// The scan history's filters, as the history and its CSV export share them.
struct ScanHistoryFilter: Sendable {
    /// nil only for PLATFORM_ADMIN reading every organization.
    var organizationId: String?
    var checkpointId: String?
    var from: Date?
    var to: Date?
    var result: ScanResult?
}

/// Reads of the `scans` table, newest first (scanned_at DESC, seq DESC), one keyset page at a time.
enum ScanRecords {
    /// Up to `limit` scans matching `filter` that come after `cursor` in the order, each with
    /// its position (for the next page's cursor).
    static func page(_ filter: ScanHistoryFilter, after cursor: ListCursor?, limit: Int,
                     _ db: Connection) throws -> [(scan: Scan, seq: Int64)] {
        var sql = "SELECT \(Scan.columns) FROM scans WHERE 1 = 1"
        var arguments: [any SQLBindable] = []
        if let organization = filter.organizationId { sql += " AND organization_id = ?"; arguments.append(organization) }
        if let checkpoint = filter.checkpointId { sql += " AND checkpoint_id = ?"; arguments.append(checkpoint) }
        if let from = filter.from { sql += " AND scanned_at >= ?"; arguments.append(from.milliseconds) }
        if let to = filter.to { sql += " AND scanned_at <= ?"; arguments.append(to.milliseconds) }
        if let result = filter.result { sql += " AND result = ?"; arguments.append(result.rawValue) }
        if let cursor {
            sql += " AND (scanned_at < ? OR (scanned_at = ? AND seq < ?))"
            arguments += [cursor.time, cursor.time, cursor.seq]
        }
        sql += " ORDER BY scanned_at DESC, seq DESC LIMIT ?"
        arguments.append(limit)
        return try db.query(sql, arguments, Scan.read)
    }

    /// Where the page after `row` starts.
    static func cursor(after row: (scan: Scan, seq: Int64)) -> ListCursor {
        ListCursor(time: row.scan.scannedAt.date.milliseconds, seq: row.seq)
    }
}
