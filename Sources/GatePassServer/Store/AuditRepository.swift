import Foundation
import GatePassCore

/// The audit log. Entries are only appended (no route changes or deletes one); retention only
/// erases values (`eraseValues`), keeping their hashes.
/// What `GET /api/admin/audit` narrows the log by; nil = no condition.
struct AuditFilter: Sendable {
    var organizationId: String?
    var from: Date?
    var to: Date?
    /// The actor: a user's or a kiosk's id, or a whole kind (`system` has no id).
    var actorId: String?
    var actorKind: AuditActorKind?
    var action: AuditAction?
    var entityId: String?
}

extension ListCursor {
    /// Where the audit page after `entry` starts.
    static func after(_ entry: StoredAuditEntry) -> ListCursor {
        ListCursor(time: entry.entry.at.milliseconds, seq: entry.seq)
    }
}

protocol AuditRepository {
    func append(_ entry: StoredAuditEntry) throws
    /// The newest entry (the chain's current end), if any.
    func latest() throws -> StoredAuditEntry?
    /// The newest entry's sequence number and link only: what an append chains to (every
    /// audited change reads it twice, and the whole entry is not needed for that).
    func latestLink() throws -> (seq: Int64, link: [UInt8])?
    /// The link of the newest entry before `seq`, if any: what the entry `seq` chains from.
    func linkBefore(seq: Int64) throws -> [UInt8]?
    /// The numbers of the entries whose values were erased, oldest first.
    func erasedSeqs() throws -> [Int64]
    /// Entries after `seq`, oldest first, for verification.
    func entries(after seq: Int64, limit: Int) throws -> [StoredAuditEntry]
    /// One page of the log, newest first (`GET /api/admin/audit`).
    func page(_ filter: AuditFilter, after cursor: ListCursor?, limit: Int) throws -> [StoredAuditEntry]
    /// Erases `before`/`after` of one entry (retention), keeping the hashes the chain covers.
    func eraseValues(seq: Int64) throws
    /// The entries about one entity (its id), oldest first: what an erase or retention reaches,
    /// and what a visitor's export shows.
    func entries(entityId: String) throws -> [StoredAuditEntry]
}
