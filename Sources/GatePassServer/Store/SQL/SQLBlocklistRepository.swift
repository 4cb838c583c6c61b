import Foundation
import GatePassCore
import SQLBinding

struct SQLBlocklistRepository<Database: SQLRunner>: BlocklistRepository {
    let db: Database

    private static var columns: String { "id, name, email, phone, company, reason, expires_at, created_at, created_by" }

    private static func entry(_ row: Database.Row) throws -> BlocklistEntry {
        BlocklistEntry(id: try row.string(named: "id"), name: try row.optionalString(named: "name"),
                       email: try row.optionalString(named: "email"), phone: try row.optionalString(named: "phone"),
                       company: try row.optionalString(named: "company"), reason: try row.string(named: "reason"),
                       expiresAt: try row.optionalDate(named: "expires_at"), createdAt: try row.date(named: "created_at"),
                       createdBy: try row.string(named: "created_by"))
    }

    func insert(_ entry: BlocklistEntry, organizationId: String) throws {
        let keys = entry.keys
        try db.execute("""
            INSERT INTO blocklist_entries (id, organization_id, name, email, phone, company, reason, expires_at, created_at,
                                           created_by, name_key, email_key, phone_key)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            """, [entry.id, organizationId, entry.name, entry.email, entry.phone, entry.company, entry.reason,
                  entry.expiresAt?.milliseconds, entry.createdAt.milliseconds, entry.createdBy,
                  keys.name, keys.email, keys.phone])
    }

    func list(organizationId: String, after cursor: ListCursor?, limit: Int) throws -> [(entry: BlocklistEntry, cursor: ListCursor)] {
        var sql = "SELECT \(Self.columns), seq FROM blocklist_entries WHERE organization_id = ?"
        var arguments: [any SQLBindable] = [organizationId]
        KeysetOrder(time: "created_at").appendPage(after: cursor, limit: limit, to: &sql, &arguments)
        return try db.query(sql, arguments) { row in
            let entry = try Self.entry(row)
            return (entry, ListCursor(time: entry.createdAt.milliseconds, seq: try row.int64(named: "seq")))
        }
    }

    func remove(id: String, organizationId: String) throws -> BlocklistEntry? {
        try db.queryFirst("DELETE FROM blocklist_entries WHERE id = ? AND organization_id = ? RETURNING \(Self.columns)",
                          [id, organizationId], Self.entry)
    }

    func candidates(for keys: BlocklistKeys, organizationId: String, now: Date) throws -> [BlocklistEntry] {
        guard let query = Self.candidatesQuery(for: keys, organizationId: organizationId, now: now) else { return [] }
        return try db.query(query.sql, query.arguments, Self.entry)
    }

    /// One indexed probe per key the visitor has, joined by UNION (an OR over three columns
    /// could leave the planner a scan); UNION also returns an entry found by two keys once.
    /// Nil when there is no key to look for.
    static func candidatesQuery(for keys: BlocklistKeys, organizationId: String, now: Date)
        -> (sql: String, arguments: [any SQLBindable])? {
        var probes: [String] = []
        var arguments: [any SQLBindable] = []
        for (column, key) in [("name_key", keys.name), ("email_key", keys.email), ("phone_key", keys.phone)] {
            guard let key else { continue }
            probes.append("""
                SELECT \(columns), seq FROM blocklist_entries
                WHERE organization_id = ? AND \(column) = ? AND (expires_at IS NULL OR expires_at > ?)
                """)
            arguments += [organizationId, key, now.milliseconds]
        }
        guard !probes.isEmpty else { return nil }
        return ("SELECT \(columns) FROM (\(probes.joined(separator: " UNION "))) AS candidates ORDER BY created_at, seq", arguments)
    }
}
