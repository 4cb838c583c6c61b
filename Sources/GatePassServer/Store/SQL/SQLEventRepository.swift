import Foundation
import GatePassCore
import SQLBinding

struct SQLEventRepository<Database: SQLRunner>: EventRepository {
    let db: Database

    func insert(_ kind: EventKind, audience: EventAudience, visitorId: String?, title: String?, data: String,
                now: Date) throws -> Int64 {
        try db.lockEventOrder()
        guard let id = try db.scalarInt("""
            INSERT INTO events (organization_id, kind, visitor_id, approver_id, checkpoint_id, user_id, device_token,
                                title, data, created_at, managers_only)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id
            """, [audience.organizationId, kind.rawValue, visitorId, audience.approverId, audience.checkpointId,
                  audience.userId, audience.deviceToken, title, data, now.milliseconds, audience.managersOnly])
        else { throw StoredDataError("an event insert returned no id") }
        try insertDeliveries(eventId: id, audience: audience, now: now)
        return id
    }

    /// One pending delivery per registered device of each user the event reaches. Driven
    /// from the organization's users, so an organization without devices costs one index probe.
    private func insertDeliveries(eventId: Int64, audience: EventAudience, now: Date) throws {
        let select = """
            INSERT INTO push_deliveries (token, event_id, user_id, status, created_at)
            SELECT d.token, ?, d.user_id, 'pending', ? FROM users u JOIN devices d ON d.user_id = u.id
            WHERE u.organization_id = ? AND
            """
        let base: [any SQLBindable] = [eventId, now.milliseconds, audience.organizationId]
        if let userId = audience.userId {
            if let token = audience.deviceToken {
                try db.execute(select + " u.id = ? AND d.token = ?", base + [userId, token])
            } else {
                try db.execute(select + " u.id = ?", base + [userId])
            }
        } else if audience.managersOnly {
            try db.execute(select + " u.role IN ('OWNER', 'ADMIN')", base)
        } else {
            try db.execute(select + " " + NotificationQueries.roleAudienceSQL(userAlias: "u", eventAlias: nil),
                           base + [audience.approverId, audience.approverId])
        }
    }

    func lastEventId() throws -> Int64 {
        try db.scalarInt(db.dialect.lastEventIdQuery) ?? 0
    }

    func purgedThrough() throws -> Int64 {
        // The row is made by migration 0002: without it a gap could go unannounced, so fail.
        // It is an id the stream counts on from (+1): never negative, never Int64.max.
        guard let purgedThrough = try db.queryFirst("SELECT value FROM counters WHERE name = 'events_purged_through'", [],
                                                    { try $0.int64(named: "value", in: 0...Int64.max - 1) })
        else { throw StoredDataError("the events_purged_through counter is missing") }
        return purgedThrough
    }

    func events(after id: Int64, through last: Int64?, limit: Int) throws -> [EventLogEntry] {
        var sql = "SELECT \(StoredEvent.columns) FROM events WHERE id > ?"
        var arguments: [any SQLBindable] = [id]
        if let last {
            sql += " AND id <= ?"
            arguments.append(last)
        }
        sql += " ORDER BY id LIMIT ?"
        arguments.append(limit)
        return try db.query(sql, arguments) { row in
            do {
                return .event(try StoredEvent.decode(row))
            } catch {
                return .unreadable(id: try row.int64(named: "id"), error: error)
            }
        }
    }

    func purge(olderThan cutoff: Date) throws {
        guard let last = try db.queryFirst("SELECT MAX(id) AS last_id FROM events WHERE created_at < ?", [cutoff.milliseconds], {
            try $0.optionalInt64(named: "last_id")
        }) ?? nil else { return }
        try db.execute("DELETE FROM push_deliveries WHERE event_id <= ?", [last])
        try db.execute("DELETE FROM notification_marks WHERE event_id <= ?", [last])
        try db.execute("DELETE FROM events WHERE id <= ?", [last])
        try db.execute("UPDATE counters SET value = ? WHERE name = 'events_purged_through' AND value < ?", [last, last])
    }

    func rows(visitorId: String, limit: Int) throws -> [LoggedEventRow] {
        try db.query("SELECT id, kind, title, data, created_at FROM events WHERE visitor_id = ? ORDER BY id LIMIT ?",
                     [visitorId, limit]) { row in
            LoggedEventRow(id: try row.int64(named: "id"), kindName: try row.string(named: "kind"),
                           title: try row.optionalString(named: "title"), data: try row.string(named: "data"),
                           createdAt: try row.date(named: "created_at"))
        }
    }

    func rewrite(eventId: Int64, title: String?, data: String) throws {
        try db.execute("UPDATE events SET title = ?, data = ? WHERE id = ?", [title, data, eventId])
    }
}

extension StoredEvent {
    static var columns: String { "id, kind, organization_id, approver_id, checkpoint_id, user_id, device_token, data, created_at, managers_only" }

    /// A row of `columns`; throws for any value not understood, an unknown kind included.
    static func decode(_ row: some StoreRow) throws -> StoredEvent {
        StoredEvent(id: try row.int64(named: "id"), kind: try row.parsed(named: "kind", as: "event kind", EventKind.init(rawValue:)),
                    audience: EventAudience(organizationId: try row.string(named: "organization_id"),
                                            approverId: try row.optionalString(named: "approver_id"),
                                            checkpointId: try row.optionalString(named: "checkpoint_id"),
                                            userId: try row.optionalString(named: "user_id"),
                                            deviceToken: try row.optionalString(named: "device_token"),
                                            managersOnly: try row.bool(named: "managers_only")),
                    data: try row.string(named: "data"), createdAt: try row.date(named: "created_at"))
    }
}

/// The SQL shape of "which users an organization-wide event reaches" (api.md: OWNER/ADMIN
/// every event of the organization; an APPROVER those of visitors assigned to it or
/// unassigned). `EventStreamFilter` is the same rule for live streams.
enum NotificationQueries {
    /// A condition on the user row `userAlias`; binds the event's approver id twice (or, with
    /// an event alias, reads it from the event row).
    static func roleAudienceSQL(userAlias u: String, eventAlias e: String?) -> String {
        // The cast gives PostgreSQL the type of a parameter it sees only in IS NULL.
        let approver = e.map { "\($0).approver_id" } ?? "CAST(? AS TEXT)"
        let approverAgain = e.map { "\($0).approver_id" } ?? "?"
        return "(\(u).role IN ('OWNER', 'ADMIN') OR (\(u).role = 'APPROVER' AND (\(approver) IS NULL OR \(u).id = \(approverAgain))))"
    }
}
