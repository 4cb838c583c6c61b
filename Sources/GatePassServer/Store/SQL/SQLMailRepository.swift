import Foundation
import GatePassCore
import SQLBinding

struct SQLMailRepository<Database: SQLRunner>: MailRepository {
    let db: Database

    func enqueue(id: String, organizationId: String?, recipient: String, content: MailContent, now: Date,
                 giveUpAt: Date) throws {
        let payload = String(decoding: content.payloadJSON, as: UTF8.self)
        try db.execute("""
            INSERT INTO mail_queue (id, organization_id, kind, recipient, payload, status, created_at, next_attempt_at, give_up_at,
                                    visitor_id)
            VALUES (?, ?, ?, ?, ?, 'queued', ?, ?, ?, ?)
            """, [id, organizationId, content.kind.rawValue, recipient, payload, now.milliseconds, now.milliseconds,
                  giveUpAt.milliseconds, content.visitorId])
    }

    func due(at now: Date, limit: Int) throws -> [QueuedMail] {
        try db.query("""
            SELECT id, organization_id, kind, recipient, payload, attempts, created_at, give_up_at FROM mail_queue
            WHERE status = 'queued' AND next_attempt_at <= ? ORDER BY next_attempt_at, seq LIMIT ?
            """, [now.milliseconds, limit]) { row in
            let content = try row.optionalString(named: "payload").flatMap {
                try? JSONDecoder().decode(MailContent.self, from: Data($0.utf8))
            }
            return QueuedMail(id: try row.string(named: "id"), organizationId: try row.optionalString(named: "organization_id"),
                              kind: try row.parsed(named: "kind", as: "mail kind", MailKind.init(rawValue:)),
                              recipient: try row.string(named: "recipient"), content: content,
                              attempts: try row.int(named: "attempts", in: StoredCount.range),
                              createdAt: try row.date(named: "created_at"), giveUpAt: try row.date(named: "give_up_at"))
        }
    }

    func nextAttemptAt() throws -> Date? {
        try db.queryFirst("SELECT MIN(next_attempt_at) AS next_attempt_at FROM mail_queue WHERE status = 'queued'", []) {
            try $0.optionalDate(named: "next_attempt_at")
        } ?? nil
    }

    func markSent(id: String, at time: Date) throws {
        try db.execute("""
            UPDATE mail_queue SET status = 'sent', payload = NULL, attempts = attempts + 1, last_error = NULL, sent_at = ?
            WHERE id = ?
            """, [time.milliseconds, id])
    }

    func markRetry(id: String, error: String, nextAttemptAt: Date) throws {
        try db.execute("UPDATE mail_queue SET attempts = attempts + 1, last_error = ?, next_attempt_at = ? WHERE id = ?",
                       [error, nextAttemptAt.milliseconds, id])
    }

    func markFailed(id: String, error: String, countsAsAttempt: Bool) throws {
        try db.execute("""
            UPDATE mail_queue SET status = 'failed', payload = NULL, attempts = attempts + ?, last_error = ? WHERE id = ?
            """, [countsAsAttempt ? 1 : 0, error, id])
    }

    func expire(at now: Date) throws -> Int {
        try db.execute("""
            UPDATE mail_queue SET status = 'failed', payload = NULL,
                last_error = COALESCE(last_error || '; ', '') || 'not sent in time, given up'
            WHERE status = 'queued' AND give_up_at <= ?
            """, [now.milliseconds])
    }

    func list(organizationId: String?, after cursor: ListCursor?, limit: Int) throws -> [(mail: MailSummary, cursor: ListCursor)] {
        var sql = "SELECT \(Self.summaryColumns), seq FROM mail_queue WHERE 1 = 1"
        var arguments: [any SQLBindable] = []
        if let organizationId { sql += " AND organization_id = ?"; arguments.append(organizationId) }
        KeysetOrder(time: "created_at").appendPage(after: cursor, limit: limit, to: &sql, &arguments)
        return try db.query(sql, arguments) { row in
            (try Self.summary(row), ListCursor(time: try row.milliseconds(named: "created_at"), seq: try row.int64(named: "seq")))
        }
    }

    private static var summaryColumns: String { "id, kind, recipient, status, attempts, last_error, created_at, sent_at" }

    private static func summary(_ row: Database.Row) throws -> MailSummary {
        MailSummary(id: try row.string(named: "id"), kind: try row.parsed(named: "kind", as: "mail kind", MailKind.init(rawValue:)),
                    to: try row.string(named: "recipient"),
                    status: try row.parsed(named: "status", as: "mail status", MailStatus.init(rawValue:)),
                    attempts: try row.int(named: "attempts", in: StoredCount.range),
                    lastError: try row.optionalString(named: "last_error"), createdAt: try row.date(named: "created_at"),
                    sentAt: try row.optionalDate(named: "sent_at"))
    }

    func payload(id: String) throws -> String? {
        try db.queryFirst("SELECT payload FROM mail_queue WHERE id = ?", [id]) { try $0.optionalString(named: "payload") } ?? nil
    }

    func erase(visitorId: String, organizationId: String, legacyEmail: String?) throws -> Int {
        // The last error may quote the address (a relay's "550 <ana@…> unknown"), so it goes too.
        try db.execute("""
            UPDATE mail_queue SET recipient = ?, payload = NULL,
                last_error = CASE WHEN status = 'queued' THEN 'not sent: the visitor was anonymised' ELSE NULL END,
                status = CASE WHEN status = 'queued' THEN 'failed' ELSE status END
            WHERE visitor_id = ? OR (visitor_id IS NULL AND kind = 'invitation' AND organization_id = ? AND recipient = ?)
            """, [Retention.anonymisedName, visitorId, organizationId, legacyEmail])
    }

    func mails(visitorId: String, limit: Int) throws -> [MailSummary] {
        try db.query("SELECT \(Self.summaryColumns) FROM mail_queue WHERE visitor_id = ? ORDER BY seq LIMIT ?",
                     [visitorId, limit], Self.summary)
    }

    func purge(finishedBefore cutoff: Date) throws {
        try db.execute("DELETE FROM mail_queue WHERE status != 'queued' AND created_at < ?", [cutoff.milliseconds])
    }
}
