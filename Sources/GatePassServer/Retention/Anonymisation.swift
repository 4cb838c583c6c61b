import Foundation
import GatePassCore

/// Anonymising visitors everywhere the server keeps a copy of their data (api.md "Retention"):
/// the visitor row (its search texts and pass page token too), its scans' `raw` text, the
/// snapshots and titles in the event log (so notification lists too), the mail log, stored
/// idempotent answers, and the values of the audit entries about it — the audit chain keeps the
/// hashes it covers, so `gatepass audit verify` still passes. Runs inside the caller's
/// transaction; statuses, times and counts stay, so stats and history still count the visitor.
/// The caller records the erasure in the same transaction (`AuditValues.erasure`): an erased
/// audit entry that no later entry lists fails verification.
enum Anonymisation {
    /// How many visitors one transaction of the daily job anonymises: the writer serves the
    /// gates between two batches.
    static let batchSize = 200
    /// More rows of one kind than one visitor can have in practice (a bound, never a cut).
    static let rowLimit = 1_000_000

    /// One organization's run at `now`: the visitors whose pass ended more than its
    /// `retentionDays` ago (at most `limit` of them, nil for all) and the scans of no visitor
    /// from before that cutoff. A dry run counts exactly what the real run erases and changes
    /// nothing.
    static func run(organizationId: String, now: Date, dryRun: Bool, limit: Int?,
                    _ tx: any Transaction) throws -> Erasure {
        guard let organization = try tx.directory.organization(id: organizationId) else {
            throw APIError.notFound("organization")
        }
        let cutoff = Retention.cutoff(now: now, retentionDays: try organization.retentionDays ?? tx.directory.serverRetentionDays())
        if dryRun {
            precondition(limit == nil, "a dry run counts the whole run")
            let counts = RetentionCounts(
                visitors: try tx.visitors.dueForRetentionCount(organizationId: organizationId, endedBefore: cutoff),
                scans: try tx.scans.rawCount(ofVisitorsDue: organizationId, endedBefore: cutoff)
                    + tx.scans.unlinkedRawCount(organizationId: organizationId, scannedBefore: cutoff))
            return Erasure(counts: counts, auditEntries: [])
        }
        var erasure = Erasure(counts: RetentionCounts(visitors: 0, scans: try tx.scans.eraseUnlinkedRaw(
            organizationId: organizationId, scannedBefore: cutoff)), auditEntries: [])
        let pageSize = limit ?? batchSize
        while true {
            let due = try tx.visitors.dueForRetention(organizationId: organizationId, endedBefore: cutoff, limit: pageSize)
            erasure = erasure + (try anonymise(due, now: now, tx))
            if due.count < pageSize || limit != nil { return erasure }
        }
    }

    /// Anonymises these visitors and every copy of their data; returns how many visitors it
    /// changed (those anonymised already are left alone), how many scans' `raw` it erased, and
    /// which audit entries' values it erased (only of `AuditChain.erasableActions`: the records
    /// of erasures and exports hold no personal data and stay whole).
    static func anonymise(_ records: [VisitorRecord], now: Date, _ tx: any Transaction) throws -> Erasure {
        var changed: [VisitorRecord] = []
        var erasedEntries: [Int64] = []
        for record in records where try tx.visitors.anonymise(record.visitor.anonymised(), at: now) {
            changed.append(record)
            let id = record.visitor.id
            try eraseEvents(ofVisitor: id, tx)
            _ = try tx.mail.erase(visitorId: id, organizationId: record.organizationId, legacyEmail: record.visitor.email)
            for stored in try tx.audit.entries(entityId: id)
            where !stored.erased && AuditChain.erasableActions.contains(stored.entry.action) {
                try tx.audit.eraseValues(seq: stored.seq)
                erasedEntries.append(stored.seq)
            }
        }
        guard let earliest = changed.map(\.visitor.createdAt).min() else { return .none }
        let ids = changed.map(\.visitor.id)
        try eraseStoredAnswers(mentioning: Set(ids), since: earliest, tx)
        return Erasure(counts: RetentionCounts(visitors: changed.count, scans: try tx.scans.eraseRaw(visitorIds: ids)),
                       auditEntries: erasedEntries)
    }

    private static func eraseEvents(ofVisitor id: String, _ tx: any Transaction) throws {
        for row in try tx.events.rows(visitorId: id, limit: rowLimit) {
            let erased = EventLog.anonymised(kindName: row.kindName, title: row.title, data: row.data)
            if erased.title != row.title || erased.data != row.data {
                try tx.events.rewrite(eventId: row.id, title: erased.title, data: erased.data)
            }
        }
    }

    /// Stored answers are rewritten, not deleted: a retry with the same Idempotency-Key must
    /// still replay (a deleted answer would run the request again, and a replayed registration
    /// would bring the erased data back), and it replays the visitor as it is now.
    private static func eraseStoredAnswers(mentioning ids: Set<String>, since: Date, _ tx: any Transaction) throws {
        for answer in try tx.idempotency.answers(createdSince: since) {
            guard let body = StoredAnswerErasure.anonymised(answer.body, visitorIds: ids) else { continue }
            try tx.idempotency.replaceBody(scope: answer.scope, key: answer.key, body: body)
        }
    }
}

/// What an anonymisation did: the counts the API answers, and the numbers of the audit entries
/// whose values it erased (which the caller's erasure record lists).
struct Erasure: Sendable, Equatable {
    var counts: RetentionCounts
    var auditEntries: [Int64]

    static let none = Erasure(counts: .zero, auditEntries: [])

    static func + (left: Erasure, right: Erasure) -> Erasure {
        Erasure(counts: left.counts + right.counts, auditEntries: left.auditEntries + right.auditEntries)
    }
}

extension EventLog {
    /// An event as retention leaves it: a visitor's snapshot anonymised (its status and times
    /// kept) and every title that named the visitor rebuilt with `"(anonymised)"`. Data that
    /// does not read as its kind's (or of a kind this build does not know) becomes `{}`:
    /// what cannot be read cannot be shown to be free of the visitor.
    static func anonymised(kindName: String, title: String?, data: String) -> (title: String?, data: String) {
        guard let kind = EventKind(rawValue: kindName) else { return (title.map { _ in kindName }, "{}") }
        let bytes = Data(data.utf8)
        let name = Retention.anonymisedName
        if kind.carriesVisitor {
            guard var event = try? JSONDecoder().decode(VisitorEventData.self, from: bytes) else {
                return (title.map { _ in NotificationItem.title(for: kind, visitorName: name) }, "{}")
            }
            event.visitor = event.visitor.anonymised()
            return (title.map { _ in NotificationItem.title(for: kind, visitorName: name, decision: event.visitor.status) },
                    encode(event))
        }
        switch kind {
        case .notificationNew, .notificationRead:
            guard var event = try? JSONDecoder().decode(NotificationEventData.self, from: bytes) else { return (title, "{}") }
            let item = event.notification
            // The item keeps no status; a decision's title says which it was.
            let decision: VisitorStatus = item.title.hasSuffix(" was rejected") ? .rejected : .approved
            event.notification.title = NotificationItem.title(for: item.kind, visitorName: name, decision: decision)
            return (title, encode(event))
        default:
            // notification.deleted holds an id only; push.test and stream.gap name no visitor.
            return (title, data)
        }
    }
}

/// The stored answers of idempotent requests, with a visitor anonymised in them.
enum StoredAnswerErasure {
    /// `body` with every visitor object whose id is in `visitorIds` replaced by that visitor
    /// anonymised (the rule of `Visitor.anonymised`, applied to the decoded visitor); nil when
    /// the body shows none of them. A visitor object that does not decode keeps its id and
    /// short id only.
    static func anonymised(_ body: [UInt8], visitorIds: Set<String>) -> [UInt8]? {
        guard !visitorIds.isEmpty,
              let root = try? JSONSerialization.jsonObject(with: Data(body), options: [.fragmentsAllowed])
        else { return nil }
        var changed = false
        func walk(_ value: Any) -> Any {
            if let object = value as? [String: Any] {
                if let id = object["id"] as? String, visitorIds.contains(id), object["shortId"] != nil {
                    changed = true
                    return anonymisedVisitor(object) ?? ["id": id, "shortId": object["shortId"] ?? NSNull()]
                }
                return object.mapValues(walk)
            }
            if let array = value as? [Any] { return array.map(walk) }
            return value
        }
        let result = walk(root)
        guard changed, let data = try? JSONSerialization.data(withJSONObject: result, options: [.sortedKeys, .withoutEscapingSlashes])
        else { return nil }
        return Array(data)
    }

    private static func anonymisedVisitor(_ object: [String: Any]) -> Any? {
        guard let bytes = try? JSONSerialization.data(withJSONObject: object),
              let visitor = try? JSONDecoder().decode(Visitor.self, from: bytes)
        else { return nil }
        return try? JSONSerialization.jsonObject(with: Data(JSONBody.encode(visitor.anonymised())))
    }
}
