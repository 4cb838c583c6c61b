import Foundation
import GatePassCore

/// Appends audit entries in the transaction of the change they record, chained to the one
/// before, and keeps the head file (outside the database) at the newest committed entry.
///
/// Not yet called by the handlers: hooking every change (api.md's action list) into its
/// transaction, and calling `committed(_:)` after each such commit (as mail is woken through
/// the request's `CommitEffects`), is the next step of issue 12.
final class AuditLog: Sendable {
    let chain: AuditChain
    let headPath: String
    /// The head last written, so a slower thread never moves it back.
    private let writtenHead = Locked<Int64>(0)

    init(chain: AuditChain, headPath: String) {
        self.chain = chain
        self.headPath = headPath
    }

    /// Appends `entry` after the newest one. Runs inside the writer's transaction, so no other
    /// append can come between the read of the newest link and this insert.
    @discardableResult
    func append(_ entry: AuditEntry, organizationId: String?, _ tx: any Transaction) throws -> StoredAuditEntry {
        let previous = try tx.audit.latest()
        let hashes = AuditChain.fieldHashes(entry, organizationId: organizationId)
        let link = chain.link(previous: previous?.link ?? AuditChain.genesis, hashes: hashes)
        let stored = StoredAuditEntry(seq: (previous?.seq ?? 0) + 1, entry: entry, organizationId: organizationId,
                                      erased: false, fieldHashes: hashes, link: link)
        try tx.audit.append(stored)
        guard let written = try tx.audit.latest(), written.link == link else {
            throw APIError.internal("the audit entry just written is not the newest")
        }
        return written
    }

    /// After a commit that appended: the newest *committed* entry becomes the head outside the
    /// database. It is read after the commit, so the head never names an entry a rollback
    /// undid; it may lag (a crash between commit and this write), never lead.
    func committed(_ store: ServerDatabase) throws {
        guard let newest = try store.read({ tx in try tx.audit.latest() }) else { return }
        try writtenHead.withLock { (current: inout Int64) throws in
            guard newest.seq > current else { return }
            try AuditHead(seq: newest.seq, link: newest.link).save(path: headPath)
            current = newest.seq
        }
    }
}
