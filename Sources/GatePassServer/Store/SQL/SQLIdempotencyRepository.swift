import Foundation
import SQLBinding

struct SQLIdempotencyRepository<Database: SQLRunner>: IdempotencyRepository {
    let db: Database

    func find(scope: String, key: String) throws -> StoredAnswer? {
        try db.queryFirst("SELECT fingerprint, status, headers, body FROM idempotency_keys WHERE scope = ? AND key = ?",
                          [scope, key]) { row in
            let headersColumn = try row.column(named: "headers")
            let headers = try row.string(headersColumn).split(separator: "\n").map { line throws -> (name: String, value: String) in
                guard let colon = line.firstIndex(of: ":") else {
                    throw row.unreadable(headersColumn, "holds a header line without a colon")
                }
                return (String(line[..<colon]), String(line[line.index(after: colon)...]))
            }
            // An HTTP status: anything else was not stored by this code.
            let status = try row.int(named: "status", in: 100...599)
            return StoredAnswer(fingerprint: try row.blob(named: "fingerprint"), status: status, headers: headers,
                                body: try row.blob(named: "body"))
        }
    }

    func insert(scope: String, key: String, answer: StoredAnswer, at time: Date) throws {
        let headers = answer.headers.map { "\($0.name):\($0.value)" }.joined(separator: "\n")
        try db.execute("""
            INSERT INTO idempotency_keys (scope, key, fingerprint, status, headers, body, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)
            """, [scope, key, answer.fingerprint, answer.status, headers, answer.body, time.milliseconds])
    }

    func purge(createdBefore: Date) throws {
        try db.execute("DELETE FROM idempotency_keys WHERE created_at < ?", [createdBefore.milliseconds])
    }

    func answers(createdSince time: Date) throws -> [(scope: String, key: String, body: [UInt8])] {
        try db.query("SELECT scope, key, body FROM idempotency_keys WHERE created_at >= ?", [time.milliseconds]) {
            (try $0.string(named: "scope"), try $0.string(named: "key"), try $0.blob(named: "body"))
        }
    }

    func replaceBody(scope: String, key: String, body: [UInt8]) throws {
        try db.execute("UPDATE idempotency_keys SET body = ? WHERE scope = ? AND key = ?", [body, scope, key])
    }
}
