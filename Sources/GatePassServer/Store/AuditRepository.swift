import Foundation
import GatePassCore

/// The audit log. Entries are only appended (no route changes or deletes one); retention only
/// erases values (`eraseValues`), keeping their hashes.
protocol AuditRepository {
    func append(_ entry: StoredAuditEntry) throws
    /// The newest entry (the chain's current end), if any.
    func latest() throws -> StoredAuditEntry?
    /// Entries after `seq`, oldest first, for verification.
    func entries(after seq: Int64, limit: Int) throws -> [StoredAuditEntry]
    /// Erases `before`/`after` of one entry (retention), keeping the hashes the chain covers.
    func eraseValues(seq: Int64) throws
    /// The entries about one entity (its id), oldest first: what an erase or retention reaches,
    /// and what a visitor's export shows.
    func entries(entityId: String) throws -> [StoredAuditEntry]
}
