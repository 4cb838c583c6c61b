/// CSV as RFC 4180 writes it, with cells that a spreadsheet would run as formulas defused
/// (OWASP's "CSV injection" rule). The one encoder of the scan-history export: the server
/// writes it and every client passes the server's bytes on unchanged.
public enum CSV {
    /// Rows end with CRLF (RFC 4180).
    public static let lineEnd = "\r\n"

    /// One cell. A value whose first character is `=`, `+`, `-`, `@`, a tab or a CR gets a
    /// leading `'` (so a parser reads back `'` + value); then a cell holding a comma, a quote
    /// or any line break — LF, CR, CRLF, NEL (U+0085), U+2028, U+2029 — is quoted, quotes
    /// doubled. Checked on Unicode scalars, not Characters: Swift's "\r\n" is one Character
    /// that equals neither "\r" nor "\n".
    public static func cell(_ value: String) -> String {
        var cell = value
        if let first = value.unicodeScalars.first, formulaStarts.contains(first) { cell = "'" + cell }
        guard cell.unicodeScalars.contains(where: needsQuotes.contains) else { return cell }
        var quoted = "\""
        for scalar in cell.unicodeScalars {
            if scalar == "\"" { quoted.unicodeScalars.append("\"") }
            quoted.unicodeScalars.append(scalar)
        }
        quoted.unicodeScalars.append("\"")
        return quoted
    }

    /// One row: the cells encoded, joined by commas, ended by CRLF.
    public static func row(_ values: [String]) -> String {
        values.map(cell).joined(separator: ",") + lineEnd
    }

    private static let formulaStarts: Set<Unicode.Scalar> = ["=", "+", "-", "@", "\t", "\r"]
    private static let needsQuotes: Set<Unicode.Scalar> = [",", "\"", "\n", "\r", "\u{85}", "\u{2028}", "\u{2029}"]
}

/// The columns of `GET /api/admin/audit.csv`, newest entry first: the JSON list's fields, with
/// `before`/`after` as their JSON text (empty when null).
public enum AuditLogCSV {
    public static let header = CSV.row(["id", "at", "actorKind", "actorId", "action", "entity", "entityId", "before", "after"])

    public static func row(_ entry: AuditEntry) -> String {
        CSV.row([entry.id, Timestamp(entry.at).description, entry.actorKind.rawValue, entry.actorId ?? "", entry.action,
                 entry.entity, entry.entityId ?? "", entry.before ?? "", entry.after ?? ""])
    }
}

/// A scan with the names its ids stand for, as the store has them when the export is read
/// (an anonymised visitor's name is what anonymisation left; a scan of unknown text has none).
public struct NamedScan: Sendable, Equatable {
    public var scan: Scan
    public var visitorName: String?
    public var company: String?
    public var gateName: String?
    /// The person who scanned (a login's or a scanner token's user), or the kiosk's label.
    public var guardName: String?

    public init(scan: Scan, visitorName: String? = nil, company: String? = nil, gateName: String? = nil,
                guardName: String? = nil) {
        self.scan = scan; self.visitorName = visitorName; self.company = company; self.gateName = gateName
        self.guardName = guardName
    }
}

/// The columns of `GET /api/admin/scan-history.csv`, newest scan first: the ids machines read
/// first, then the names people read and the scan's time at its site (`scannedAtLocal`,
/// RFC 3339 with the site's offset). New columns are only ever appended.
public enum ScanHistoryCSV {
    public static let header = CSV.row(["id", "shortId", "raw", "result", "visitorId", "checkpointId", "scannedBy",
                                        "scannedAt", "receivedAt", "offline", "offlineDecision",
                                        "visitorName", "company", "gateName", "guardName", "scannedAtLocal"])

    /// - Parameter site: the clock of the scan's own organization.
    public static func row(_ named: NamedScan, site: SiteClock) -> String {
        let scan = named.scan
        return CSV.row([scan.id, scan.shortId ?? "", scan.raw ?? "", scan.result.rawValue, scan.visitorId ?? "",
                        scan.checkpointId, scan.scannedBy, scan.scannedAt.description, scan.receivedAt.description,
                        scan.offline ? "true" : "false", scan.offlineDecision?.rawValue ?? "",
                        named.visitorName ?? "", named.company ?? "", named.gateName ?? "", named.guardName ?? "",
                        site.localRFC3339(scan.scannedAt.date)])
    }
}
