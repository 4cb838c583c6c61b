import Foundation
import GatePassCore
import SQLBinding

struct SQLAuditRepository<Database: SQLRunner>: AuditRepository {
    let db: Database

    private static var columns: String { """
        seq, id, organization_id, at, actor_kind, actor_id, action, entity, entity_id, before, after, erased, field_hashes, link
        """ }

    /// A row as stored. A value not understood (an unknown actor kind, hashes of the wrong
    /// length) throws: verification must never guess.
    private static func entry(_ row: Database.Row) throws -> StoredAuditEntry {
        let hashes = try row.blob(named: "field_hashes")
        guard hashes.count == AuditChain.fieldNames.count * 32 else {
            throw StoredDataError("audit entry \(try row.int64(named: "seq")) has \(hashes.count) bytes of field hashes")
        }
        let entry = AuditEntry(id: try row.string(named: "id"), at: try row.date(named: "at"),
                               actorKind: try row.parsed(named: "actor_kind", as: "audit actor kind", AuditActorKind.init(rawValue:)),
                               actorId: try row.optionalString(named: "actor_id"), action: try row.string(named: "action"),
                               entity: try row.string(named: "entity"), entityId: try row.optionalString(named: "entity_id"),
                               before: try row.optionalString(named: "before"), after: try row.optionalString(named: "after"))
        return StoredAuditEntry(seq: try row.int64(named: "seq"), entry: entry,
                                organizationId: try row.optionalString(named: "organization_id"),
                                erased: try row.bool(named: "erased"),
                                fieldHashes: stride(from: 0, to: hashes.count, by: 32).map { Array(hashes[$0..<($0 + 32)]) },
                                link: try row.blob(named: "link"))
    }

    func append(_ stored: StoredAuditEntry) throws {
        let entry = stored.entry
        try db.execute("""
            INSERT INTO audit_log (id, organization_id, at, actor_kind, actor_id, action, entity, entity_id, before, after,
                erased, field_hashes, link) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 0, ?, ?)
            """, [entry.id, stored.organizationId, entry.at.milliseconds, entry.actorKind.rawValue, entry.actorId, entry.action,
                  entry.entity, entry.entityId, entry.before, entry.after, stored.fieldHashes.flatMap { $0 }, stored.link])
    }

    func latest() throws -> StoredAuditEntry? {
        try db.queryFirst("SELECT \(Self.columns) FROM audit_log ORDER BY seq DESC LIMIT 1", [], Self.entry)
    }

    func latestLink() throws -> (seq: Int64, link: [UInt8])? {
        try db.queryFirst("SELECT seq, link FROM audit_log ORDER BY seq DESC LIMIT 1", []) { row in
            let link = try row.blob(named: "link")
            guard link.count == 32 else {
                throw StoredDataError("audit entry \(try row.int64(named: "seq")) has a link of \(link.count) bytes")
            }
            return (try row.int64(named: "seq"), link)
        }
    }

    func linkBefore(seq: Int64) throws -> [UInt8]? {
        try db.queryFirst("SELECT seq, link FROM audit_log WHERE seq < ? ORDER BY seq DESC LIMIT 1", [seq]) { row in
            let link = try row.blob(named: "link")
            guard link.count == 32 else { throw StoredDataError("audit entry \(try row.int64(named: "seq")) has a link of \(link.count) bytes") }
            return link
        }
    }

    func erasedSeqs() throws -> [Int64] {
        try db.query("SELECT seq FROM audit_log WHERE erased <> 0 ORDER BY seq", []) { row in try row.int64(named: "seq") }
    }

    func entries(after seq: Int64, limit: Int) throws -> [StoredAuditEntry] {
        try db.query("SELECT \(Self.columns) FROM audit_log WHERE seq > ? ORDER BY seq LIMIT ?", [seq, limit], Self.entry)
    }

    func page(_ filter: AuditFilter, after cursor: ListCursor?, limit: Int) throws -> [StoredAuditEntry] {
        var sql = "SELECT \(Self.columns) FROM audit_log WHERE 1 = 1"
        var arguments: [any SQLBindable] = []
        if let organization = filter.organizationId { sql += " AND organization_id = ?"; arguments.append(organization) }
        if let from = filter.from { sql += " AND at >= ?"; arguments.append(from.milliseconds) }
        if let to = filter.to { sql += " AND at <= ?"; arguments.append(to.milliseconds) }
        if let actor = filter.actorId { sql += " AND actor_id = ?"; arguments.append(actor) }
        if let kind = filter.actorKind { sql += " AND actor_kind = ?"; arguments.append(kind.rawValue) }
        if let action = filter.action { sql += " AND action = ?"; arguments.append(action.rawValue) }
        if let entity = filter.entityId { sql += " AND entity_id = ?"; arguments.append(entity) }
        KeysetOrder(time: "at").appendPage(after: cursor, limit: limit, to: &sql, &arguments)
        return try db.query(sql, arguments, Self.entry)
    }

    func eraseValues(seq: Int64) throws {
        try db.execute("UPDATE audit_log SET before = NULL, after = NULL, erased = 1 WHERE seq = ?", [seq])
    }

    func entries(entityId: String) throws -> [StoredAuditEntry] {
        try db.query("SELECT \(Self.columns) FROM audit_log WHERE entity_id = ? ORDER BY seq", [entityId], Self.entry)
    }
}
