import Foundation
import GatePassCore
import SQLBinding

struct SQLScanRepository<Database: SQLRunner>: ScanRepository {
    let db: Database

    static var columns: String { "id, short_id, raw, result, visitor_id, checkpoint_id, scanned_by, scanned_at, received_at, offline, seq, offline_decision" }

    static func read(_ row: Database.Row) throws -> (scan: Scan, seq: Int64) {
        (Scan(id: try row.string(named: "id"),
              shortId: try row.optionalParsed(named: "short_id", as: "short id", { ShortID(stored: $0)?.rawValue }),
              raw: try row.optionalString(named: "raw"),
              result: try row.parsed(named: "result", as: "scan result", ScanResult.init(rawValue:)),
              visitorId: try row.optionalString(named: "visitor_id"), checkpointId: try row.string(named: "checkpoint_id"),
              scannedBy: try row.string(named: "scanned_by"), scannedAt: Timestamp(try row.date(named: "scanned_at")),
              receivedAt: Timestamp(try row.date(named: "received_at")), offline: try row.bool(named: "offline"),
              offlineDecision: try row.optionalParsed(named: "offline_decision", as: "offline decision",
                                                      ScanResult.init(rawValue:))),
         try row.int64(named: "seq"))
    }

    func insert(_ scan: Scan, organizationId: String, kioskId: String?) throws {
        try db.execute("""
            INSERT INTO scans (id, organization_id, short_id, raw, result, visitor_id, checkpoint_id, scanned_by,
                               scanned_at, received_at, offline, offline_decision, kiosk_id)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            """, [scan.id, organizationId, scan.shortId, scan.raw, scan.result.rawValue, scan.visitorId, scan.checkpointId,
                  scan.scannedBy, scan.scannedAt.date.milliseconds, scan.receivedAt.date.milliseconds, scan.offline,
                  scan.offlineDecision?.rawValue, kioskId])
    }

    func countUnknownScan(organizationId: String, checkpointId: String, day: LocalDay, cap: Int) throws -> Bool {
        try db.execute("""
            INSERT INTO unknown_scan_days (checkpoint_id, day, organization_id, stored, counted) VALUES (?, ?, ?, 0, 0)
            ON CONFLICT (checkpoint_id, day) DO NOTHING
            """, [checkpointId, day.description, organizationId])
        guard let row = try unknownScanDay(checkpointId: checkpointId, day: day) else {
            throw StoredDataError("the unknown_scan_days row just written is missing")
        }
        let stores = row.stored < cap
        try db.execute(stores
                       ? "UPDATE unknown_scan_days SET stored = stored + 1 WHERE checkpoint_id = ? AND day = ?"
                       : "UPDATE unknown_scan_days SET counted = counted + 1 WHERE checkpoint_id = ? AND day = ?",
                       [checkpointId, day.description])
        return stores
    }

    func unknownScanDay(checkpointId: String, day: LocalDay) throws -> (stored: Int, counted: Int)? {
        try db.queryFirst("SELECT stored, counted FROM unknown_scan_days WHERE checkpoint_id = ? AND day = ?",
                          [checkpointId, day.description]) {
            (stored: try $0.int(named: "stored", in: 0...Int(Int32.max)), counted: try $0.int(named: "counted", in: 0...Int(Int32.max)))
        }
    }

    func setOfflineDecision(_ decision: ScanResult, scanId: String) throws -> Bool {
        try db.execute("UPDATE scans SET offline = 1, offline_decision = ? WHERE id = ? AND offline_decision IS NULL", [decision.rawValue, scanId]) == 1
    }

    func page(_ filter: ScanHistoryFilter, after cursor: ListCursor?, limit: Int) throws -> [(scan: Scan, seq: Int64)] {
        var sql = "SELECT \(Self.columns) FROM scans WHERE 1 = 1"
        var arguments: [any SQLBindable] = []
        Self.appendFilter(filter, table: "scans", after: cursor, limit: limit, to: &sql, &arguments)
        return try db.query(sql, arguments, Self.read)
    }

    func namedPage(_ filter: ScanHistoryFilter, after cursor: ListCursor?, limit: Int) throws -> [ExportedScan] {
        // Outer joins: a scan of unknown text has no visitor, and only a kiosk's scan has a kiosk.
        let columns = Self.columns.split(separator: ", ").map { "s.\($0) AS \($0)" }.joined(separator: ", ")
        var sql = """
            SELECT \(columns), s.organization_id AS organization_id, v.name AS visitor_name,
                   v.company AS visitor_company, c.name AS gate_name, COALESCE(k.name, u.name) AS guard_name
            FROM scans s
            LEFT JOIN visitors v ON v.id = s.visitor_id
            LEFT JOIN checkpoints c ON c.id = s.checkpoint_id
            LEFT JOIN users u ON u.id = s.scanned_by
            LEFT JOIN kiosks k ON k.id = s.kiosk_id
            WHERE 1 = 1
            """
        var arguments: [any SQLBindable] = []
        Self.appendFilter(filter, table: "s", after: cursor, limit: limit, to: &sql, &arguments)
        return try db.query(sql, arguments) { row in
            let (scan, seq) = try Self.read(row)
            return ExportedScan(named: NamedScan(scan: scan, visitorName: try row.optionalString(named: "visitor_name"),
                                                 company: try row.optionalString(named: "visitor_company"),
                                                 gateName: try row.optionalString(named: "gate_name"),
                                                 guardName: try row.optionalString(named: "guard_name")),
                                organizationId: try row.string(named: "organization_id"), seq: seq)
        }
    }

    /// The history's filters, keyset order and limit, on the scans table as `table` names it.
    private static func appendFilter(_ filter: ScanHistoryFilter, table: String, after cursor: ListCursor?, limit: Int,
                                     to sql: inout String, _ arguments: inout [any SQLBindable]) {
        if let organization = filter.organizationId { sql += " AND \(table).organization_id = ?"; arguments.append(organization) }
        if let checkpoint = filter.checkpointId { sql += " AND \(table).checkpoint_id = ?"; arguments.append(checkpoint) }
        if let from = filter.from { sql += " AND \(table).scanned_at >= ?"; arguments.append(from.milliseconds) }
        if let to = filter.to { sql += " AND \(table).scanned_at <= ?"; arguments.append(to.milliseconds) }
        if let result = filter.result { sql += " AND \(table).result = ?"; arguments.append(result.rawValue) }
        KeysetOrder(time: "\(table).scanned_at", seq: "\(table).seq").appendPage(after: cursor, limit: limit, to: &sql, &arguments)
    }

    /// `?, ?, …` for `count` values (callers pass at most a batch: SQLite binds up to 32,766).
    static func placeholders(_ count: Int) -> String {
        precondition(count > 0, "an IN list needs at least one value")
        return Array(repeating: "?", count: count).joined(separator: ", ")
    }

    func rawCount(ofVisitorsDue organizationId: String, endedBefore cutoff: Date) throws -> Int {
        Int(try db.scalarInt("""
            SELECT COUNT(*) FROM scans s JOIN visitors v ON v.id = s.visitor_id
            WHERE v.organization_id = ? AND v.valid_until < ? AND v.anonymised_at IS NULL AND v.status != 'CHECKED_IN'
                AND s.raw IS NOT NULL
            """, [organizationId, cutoff.milliseconds]) ?? 0)
    }

    func eraseRaw(visitorIds: [String]) throws -> Int {
        guard !visitorIds.isEmpty else { return 0 }
        return try db.execute("""
            UPDATE scans SET raw = NULL WHERE visitor_id IN (\(Self.placeholders(visitorIds.count))) AND raw IS NOT NULL
            """, visitorIds.map { $0 as any SQLBindable })
    }

    func unlinkedRawCount(organizationId: String, scannedBefore cutoff: Date) throws -> Int {
        Int(try db.scalarInt("""
            SELECT COUNT(*) FROM scans WHERE organization_id = ? AND visitor_id IS NULL AND raw IS NOT NULL AND scanned_at < ?
            """, [organizationId, cutoff.milliseconds]) ?? 0)
    }

    func eraseUnlinkedRaw(organizationId: String, scannedBefore cutoff: Date) throws -> Int {
        try db.execute("""
            UPDATE scans SET raw = NULL WHERE organization_id = ? AND visitor_id IS NULL AND raw IS NOT NULL AND scanned_at < ?
            """, [organizationId, cutoff.milliseconds])
    }

    func scans(visitorId: String, limit: Int) throws -> [Scan] {
        try db.query("SELECT \(Self.columns) FROM scans WHERE visitor_id = ? ORDER BY seq LIMIT ?", [visitorId, limit]) {
            try Self.read($0).scan
        }
    }
}
