import Foundation
import GatePassCore

/// The event log: what the event stream serves, the notification lists are made of, and
/// push deliveries are counted against.
///
/// Appending happens inside the transaction of the change being reported, so a crash can
/// never keep one without the other.
protocol EventRepository {
    /// Stores one event and a pending push delivery per registered device of each user it
    /// reaches (`audience`: the user and device it names, or the organization's users by the
    /// role rule of api.md), and returns its id. Use `append`, which also adds the
    /// `notification.new` of a notable event.
    func insert(_ kind: EventKind, audience: EventAudience, visitorId: String?, title: String?, data: String,
                now: Date) throws -> Int64

    /// The highest event id ever given out (purged or not); 0 before the first event.
    func lastEventId() throws -> Int64

    /// The highest event id purged: a resume from before it has missed events.
    /// - Throws: when the store does not keep that number (a stream must then fail, not
    ///   leave a gap unannounced).
    func purgedThrough() throws -> Int64

    /// Up to `limit` events after `id` (through `last`, when given), oldest first. A row this
    /// build cannot read (an unknown kind a newer server wrote, a damaged value) is returned as
    /// `.unreadable`, so that one bad row moves cursors instead of stopping every stream.
    func events(after id: Int64, through last: Int64?, limit: Int) throws -> [EventLogEntry]

    /// Deletes events older than `cutoff` with their notification marks and push deliveries,
    /// and remembers the highest id deleted (see `purgedThrough`).
    func purge(olderThan cutoff: Date) throws

    // MARK: Retention

    /// The stored events about one visitor (its snapshots, and the notification events that
    /// name it), oldest first, at most `limit`, read as stored: the kind as text, so a row of a
    /// kind this build does not know is still reached.
    func rows(visitorId: String, limit: Int) throws -> [LoggedEventRow]
    /// Replaces one event's title and data (retention: the same event, its personal data removed).
    func rewrite(eventId: Int64, title: String?, data: String) throws
}

/// An event row as stored, for retention and a visitor's export.
struct LoggedEventRow: Sendable {
    var id: Int64
    var kindName: String
    var title: String?
    var data: String
    var createdAt: Date
}

extension EventRepository {
    /// Appends an event; a notable one (it has a title) also gets its `notification.new`.
    /// Each appended event gets a pending push delivery per device of each user it reaches.
    @discardableResult
    func append(_ kind: EventKind, audience: EventAudience, visitorId: String?, title: String?, data: String,
                now: Date) throws -> Int64 {
        let id = try insert(kind, audience: audience, visitorId: visitorId, title: title, data: data, now: now)
        if let title {
            let item = NotificationItem(id: String(id), kind: kind, title: title, visitorId: visitorId,
                                        createdAt: Timestamp(now), readAt: nil)
            // Scanner tokens keep no notification lists: the companion is for users only.
            var userAudience = audience
            userAudience.checkpointId = nil
            _ = try insert(.notificationNew, audience: userAudience, visitorId: visitorId, title: nil,
                           data: String(decoding: NotificationEventData(notification: item).jsonText, as: UTF8.self), now: now)
        }
        return id
    }

    /// `visitor.*`, `request.created`: the visitor as it is after the change.
    func appendVisitorEvent(_ kind: EventKind, visitor: Visitor, organizationId: String, checkpointId: String?,
                            scanId: String? = nil, now: Date) throws {
        let data = String(decoding: VisitorEventData(visitor: visitor, scanId: scanId, checkpointId: checkpointId).jsonText,
                          as: UTF8.self)
        try append(kind, audience: EventAudience(organizationId: organizationId, approverId: visitor.approverId,
                                                 checkpointId: checkpointId),
                   visitorId: visitor.id,
                   title: NotificationItem.title(for: kind, visitorName: visitor.name, decision: visitor.status),
                   data: data, now: now)
    }

    /// `security.alert` (api.md "Blocklist"): a blocked visitor at a gate, for the
    /// organization's OWNERs and ADMINs only. `checkpointId` names the gate; the event is
    /// not addressed to it (its scanner is told `BLOCKED`, never which entry or why).
    /// - Parameters:
    ///   - entryId: the blocklist entry the visitor matched, if a block raised it.
    ///   - offlineDecision: for a replayed offline scan the server decided otherwise, the
    ///     kiosk's decision (`decision` is then the server's).
    func appendSecurityAlert(visitor: Visitor, entryId: String?, organizationId: String, checkpointId: String?,
                             scanId: String?, offlineDecision: ScanResult? = nil, decision: ScanResult? = nil,
                             failedCondition: OfflineClaimFailure? = nil, now: Date) throws {
        let data = String(decoding: VisitorEventData(visitor: visitor, scanId: scanId, checkpointId: checkpointId, entryId: entryId,
                                                     offlineDecision: offlineDecision, decision: decision,
                                                     failedCondition: failedCondition).jsonText,
                          as: UTF8.self)
        try append(.securityAlert, audience: EventAudience(organizationId: organizationId, managersOnly: true),
                   visitorId: visitor.id, title: NotificationItem.title(for: .securityAlert, visitorName: visitor.name),
                   data: data, now: now)
    }
}

/// One row of the event log as read.
enum EventLogEntry {
    case event(StoredEvent)
    /// A row this build cannot read, with why.
    case unreadable(id: Int64, error: any Error)
}
