import Foundation

/// The answer stored for an idempotent request, with the fingerprint of that request.
struct StoredAnswer: Sendable {
    var fingerprint: [UInt8]
    var status: Int
    var headers: [(name: String, value: String)]
    var body: [UInt8]
}

/// Stored answers to idempotent POSTs, by scope (organization and user) and key.
protocol IdempotencyRepository {
    /// The stored answer. A header line without its colon or a status that is not an HTTP
    /// status is not understood and throws: a replay must not answer with parts missing.
    func find(scope: String, key: String) throws -> StoredAnswer?
    func insert(scope: String, key: String, answer: StoredAnswer, at time: Date) throws
    func purge(createdBefore: Date) throws

    // MARK: Retention

    /// The stored answers created at or after `time`, with their scope and key (an answer can
    /// only show a visitor that existed when it was given).
    func answers(createdSince time: Date) throws -> [(scope: String, key: String, body: [UInt8])]
    /// Replaces one stored answer's body (retention: the same answer, its visitor anonymised).
    func replaceBody(scope: String, key: String, body: [UInt8]) throws
}
