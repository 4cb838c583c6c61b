import Foundation
import SQLite

/// A mutation written locally first and replayed to the server exactly once.
public struct OutboxEntry: Sendable, Equatable, Codable {
    /// Which token the request needs.
    public enum Credential: String, Sendable, Codable { case login, scanner }

    public var id: Int64
    /// What the entry does, for people: "checkin", "checkout", "approve", "reject", "walk-in".
    public var kind: String
    public var method: String
    public var url: String
    public var body: String?
    public var createdAt: Date
    public var attempts: Int
    public var lastError: String?
    /// Sent as `Idempotency-Key` on every attempt, so a replay is never applied twice.
    public var idempotencyKey: String
    public var nextAttemptAt: Date
    /// For check-ins: when the pass was really scanned (sent as `scannedAt` on replays).
    public var scannedAt: Date?
    public var credential: Credential
}

/// An entry the server refused for good (a 4xx other than 401), kept for people to see.
public struct DeadLetter: Sendable, Equatable, Codable {
    public var entry: OutboxEntry
    public var status: Int
    public var errorCode: String
    public var errorMessage: String
    public var deadAt: Date
}

extension Date {
    var millisecondsSince1970: Int64 { Int64((timeIntervalSince1970 * 1000).rounded(.down)) }
    init(millisecondsSince1970 value: Int64) { self.init(timeIntervalSince1970: Double(value) / 1000) }
}

/// The outbox tables of the state file.
extension ClientDatabase {
    static let outboxColumns = """
        id, kind, method, url, body, created_at, attempts, last_error, idempotency_key, next_attempt_at, scanned_at, credential
        """

    /// A row of `outboxColumns` (dead letters read their next attempt from `nextAttemptColumn`).
    /// A value not understood throws: an entry is never replayed with a guessed credential or body.
    static func entry(_ row: Row, nextAttemptColumn: Int32 = 9) throws -> OutboxEntry {
        OutboxEntry(id: try row.int64(0), kind: try row.string(1), method: try row.string(2), url: try row.string(3),
                    body: try row.optionalBlob(4).map { bytes in
                        guard let text = String(validating: bytes, as: UTF8.self) else {
                            throw row.unreadable(4, "holds a body that is not UTF-8")
                        }
                        return text
                    },
                    // Times within years 0000...9999 and a count that is not negative (the
                    // backoff subtracts from it): anything else was not written by this code.
                    createdAt: try row.date(5), attempts: Int(try row.int64(6, in: 0...Int64(Int32.max))),
                    lastError: try row.optionalString(7), idempotencyKey: try row.string(8),
                    nextAttemptAt: try row.date(nextAttemptColumn),
                    scannedAt: try row.optionalDate(10),
                    credential: try row.parsed(11, as: "credential", OutboxEntry.Credential.init(rawValue:)))
    }

    /// Writes a new entry, durable when this returns. Its idempotency key is a fresh UUID.
    @discardableResult
    public func enqueue(kind: String, method: String, url: String, body: String?, credential: OutboxEntry.Credential,
                        scannedAt: Date?, now: Date) throws(ClientError) -> OutboxEntry {
        let key = UUID().uuidString.lowercased()
        return try withConnection { connection in
            try connection.execute("""
                INSERT INTO outbox (kind, method, url, body, created_at, attempts, idempotency_key, next_attempt_at,
                                    scanned_at, credential)
                VALUES (?, ?, ?, ?, ?, 0, ?, ?, ?, ?)
                """, [kind, method, url, body.map { Array($0.utf8) }, now.millisecondsSince1970, key,
                      now.millisecondsSince1970, scannedAt?.millisecondsSince1970, credential.rawValue])
            return OutboxEntry(id: connection.lastInsertRowID, kind: kind, method: method, url: url, body: body,
                               createdAt: now, attempts: 0, lastError: nil, idempotencyKey: key, nextAttemptAt: now,
                               scannedAt: scannedAt, credential: credential)
        }
    }

    /// Every queued entry, oldest first.
    public func outboxEntries() throws(ClientError) -> [OutboxEntry] {
        try withConnection { try $0.query("SELECT \(Self.outboxColumns) FROM outbox ORDER BY id", []) { try Self.entry($0) } }
    }

    public func outboxEntry(id: Int64) throws(ClientError) -> OutboxEntry? {
        try withConnection { try $0.queryFirst("SELECT \(Self.outboxColumns) FROM outbox WHERE id = ?", [id]) { try Self.entry($0) } }
    }

    public func outboxCount() throws(ClientError) -> Int {
        try withConnection { Int(try $0.scalarInt("SELECT COUNT(*) FROM outbox") ?? 0) }
    }

    /// The entry succeeded (2xx recorded): it leaves the outbox.
    func completeEntry(id: Int64) throws(ClientError) {
        try lazily { _ = try $0.execute("DELETE FROM outbox WHERE id = ?", [id]) }
    }

    /// A retryable failure: count it and wait until `nextAttemptAt`.
    func deferEntry(id: Int64, error: String, nextAttemptAt: Date) throws(ClientError) {
        try lazily {
            _ = try $0.execute("UPDATE outbox SET attempts = attempts + 1, last_error = ?, next_attempt_at = ? WHERE id = ?",
                               [error, nextAttemptAt.millisecondsSince1970, id])
        }
    }

    /// A permanent refusal: the entry moves to the dead letters, in one transaction.
    func killEntry(_ entry: OutboxEntry, status: Int, code: String, message: String, now: Date) throws(ClientError) {
        try transaction { connection in
            try connection.execute("""
                INSERT INTO dead_letters (id, kind, method, url, body, created_at, attempts, last_error, idempotency_key,
                                          scanned_at, credential, status, error_code, error_message, dead_at)
                SELECT id, kind, method, url, body, created_at, attempts + 1, ?, idempotency_key, scanned_at, credential,
                       ?, ?, ?, ? FROM outbox WHERE id = ?
                """, ["\(code): \(message)", status, code, message, now.millisecondsSince1970, entry.id])
            try connection.execute("DELETE FROM outbox WHERE id = ?", [entry.id])
        }
    }

    public func deadLetters() throws(ClientError) -> [DeadLetter] {
        try withConnection {
            // A dead letter has no next attempt: its `nextAttemptAt` reads as the time it died.
            try $0.query("""
                SELECT id, kind, method, url, body, created_at, attempts, last_error, idempotency_key, dead_at, scanned_at,
                       credential, status, error_code, error_message, dead_at
                FROM dead_letters ORDER BY id
                """, []) { row in
                DeadLetter(entry: try Self.entry(row, nextAttemptColumn: 15),
                           status: try row.int(12), errorCode: try row.string(13), errorMessage: try row.string(14),
                           deadAt: try row.date(15))
            }
        }
    }

    /// Puts a dead letter (or a waiting entry) back at the front of the queue, due now.
    /// Returns false when no entry has that id.
    public func retry(id: Int64, now: Date) throws(ClientError) -> Bool {
        try transaction { connection in
            if try connection.execute("UPDATE outbox SET next_attempt_at = ? WHERE id = ?", [now.millisecondsSince1970, id]) > 0 {
                return true
            }
            let moved = try connection.execute("""
                INSERT INTO outbox (id, kind, method, url, body, created_at, attempts, last_error, idempotency_key,
                                    next_attempt_at, scanned_at, credential)
                SELECT id, kind, method, url, body, created_at, attempts, last_error, idempotency_key, ?, scanned_at, credential
                FROM dead_letters WHERE id = ?
                """, [now.millisecondsSince1970, id])
            try connection.execute("DELETE FROM dead_letters WHERE id = ?", [id])
            return moved > 0
        }
    }

    /// Drops everything that belongs to the previous identity: queue, dead letters, caches
    /// (the pass cache too: another organization's passes and keys).
    func purgeIdentityData() throws(ClientError) {
        try transaction { connection in
            try connection.execute("DELETE FROM outbox")
            try connection.execute("DELETE FROM dead_letters")
            try connection.execute("DELETE FROM cache")
            try connection.execute("DELETE FROM pass_cache_state")
            try connection.execute("DELETE FROM pass_cache_passes")
            try connection.execute("DELETE FROM pass_cache_on_site")
            try connection.execute("DELETE FROM meta WHERE key = ?", [Self.passKeysKey])
            try connection.execute("DELETE FROM on_site_roll_state")
            try connection.execute("DELETE FROM on_site_changes")
        }
    }
}
