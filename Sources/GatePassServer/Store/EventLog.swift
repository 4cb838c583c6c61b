import Foundation
import GatePassCore
import SQLite

/// Who receives an event: the audience columns of the `events` table (see Schema 0002).
struct EventAudience: Sendable, Equatable {
    var organizationId: String
    /// The visitor's assigned approver when the event happened; nil = unassigned.
    var approverId: String?
    /// Scanner tokens bound to this checkpoint receive the event.
    var checkpointId: String?
    /// The event is for this user only.
    var userId: String?
    /// Only a stream that presented this device token receives it.
    var deviceToken: String?
}

/// One stored event.
struct StoredEvent: Sendable {
    var id: Int64
    var kind: EventKind
    var audience: EventAudience
    var data: String
    var createdAt: Date

    static let columns = "id, kind, organization_id, approver_id, checkpoint_id, user_id, device_token, data, created_at"

    /// A row of `columns`; throws for any value not understood, an unknown kind included.
    static func decode(_ row: Row) throws -> StoredEvent {
        StoredEvent(id: try row.int64(0), kind: try row.parsed(1, as: "event kind", EventKind.init(rawValue:)),
                    audience: EventAudience(organizationId: try row.string(2), approverId: try row.optionalString(3),
                                            checkpointId: try row.optionalString(4), userId: try row.optionalString(5),
                                            deviceToken: try row.optionalString(6)),
                    data: try row.string(7), createdAt: try row.date(8))
    }
}

/// Appending to the event log, always inside the transaction of the change being reported,
/// so a crash can never keep one without the other.
enum EventLog {
    /// Appends an event; a notable one (it has a title) also gets its `notification.new`.
    /// Each appended event gets a pending push delivery per device of each user it reaches.
    @discardableResult
    static func append(_ kind: EventKind, audience: EventAudience, visitorId: String?, title: String?, data: String,
                       now: Date, _ db: Connection) throws -> Int64 {
        let id = try insert(kind, audience: audience, visitorId: visitorId, title: title, data: data, now: now, db)
        if let title {
            let item = NotificationItem(id: String(id), kind: kind, title: title, visitorId: visitorId,
                                        createdAt: Timestamp(now), readAt: nil)
            // Scanner tokens keep no notification lists: the companion is for users only.
            var userAudience = audience
            userAudience.checkpointId = nil
            _ = try insert(.notificationNew, audience: userAudience, visitorId: visitorId, title: nil,
                       data: encode(NotificationEventData(notification: item)), now: now, db)
        }
        return id
    }

    /// `visitor.*`, `request.created`: the visitor as it is after the change.
    static func appendVisitorEvent(_ kind: EventKind, visitor: Visitor, organizationId: String, checkpointId: String?,
                                   scanId: String? = nil, now: Date, _ db: Connection) throws {
        let data = encode(VisitorEventData(visitor: visitor, scanId: scanId, checkpointId: checkpointId))
        try append(kind, audience: EventAudience(organizationId: organizationId, approverId: visitor.approverId,
                                                 checkpointId: checkpointId),
                   visitorId: visitor.id,
                   title: NotificationItem.title(for: kind, visitorName: visitor.name, decision: visitor.status),
                   data: data, now: now, db)
    }

    private static func insert(_ kind: EventKind, audience: EventAudience, visitorId: String?, title: String?,
                               data: String, now: Date, _ db: Connection) throws -> Int64 {
        try db.execute("""
            INSERT INTO events (organization_id, kind, visitor_id, approver_id, checkpoint_id, user_id, device_token,
                                title, data, created_at)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            """, [audience.organizationId, kind.rawValue, visitorId, audience.approverId, audience.checkpointId,
                  audience.userId, audience.deviceToken, title, data, now.milliseconds])
        let id = db.lastInsertRowID
        try insertDeliveries(eventId: id, audience: audience, now: now, db)
        return id
    }

    /// One pending delivery per registered device of each user the event reaches. Driven
    /// from the organization's users, so an organization without devices costs one index probe.
    private static func insertDeliveries(eventId: Int64, audience: EventAudience, now: Date, _ db: Connection) throws {
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
        } else {
            try db.execute(select + " " + NotificationQueries.roleAudienceSQL(userAlias: "u", eventAlias: nil),
                           base + [audience.approverId, audience.approverId])
        }
    }

    /// Deletes events older than `cutoff` with their marks and deliveries, and remembers the
    /// highest id deleted so that a resume from before it is told about the gap.
    static func purge(olderThan cutoff: Date, _ db: Connection) throws {
        guard let last = try db.queryFirst("SELECT MAX(id) FROM events WHERE created_at < ?", [cutoff.milliseconds], {
            try $0.optionalInt64(0)
        }) ?? nil else { return }
        try db.execute("DELETE FROM push_deliveries WHERE event_id <= ?", [last])
        try db.execute("DELETE FROM notification_marks WHERE event_id <= ?", [last])
        try db.execute("DELETE FROM events WHERE id <= ?", [last])
        try db.execute("UPDATE counters SET value = max(value, ?) WHERE name = 'events_purged_through'", [last])
    }

    static func encode<T: Encodable>(_ value: T) -> String {
        String(decoding: JSONBody.encode(value), as: UTF8.self)
    }
}

/// The SQL shape of "which users an organization-wide event reaches" (api.md: OWNER/ADMIN
/// every event of the organization; an APPROVER those of visitors assigned to it or
/// unassigned). `EventStreamFilter` is the same rule for live streams.
enum NotificationQueries {
    /// A condition on the user row `userAlias`; binds the event's approver id twice (or, with
    /// an event alias, reads it from the event row).
    static func roleAudienceSQL(userAlias u: String, eventAlias e: String?) -> String {
        let approver = e.map { "\($0).approver_id" } ?? "?"
        let approverAgain = e.map { "\($0).approver_id" } ?? "?"
        return "(\(u).role IN ('OWNER', 'ADMIN') OR (\(u).role = 'APPROVER' AND (\(approver) IS NULL OR \(u).id = \(approverAgain))))"
    }
}
