import Foundation
import GatePassCore

/// Appends audit entries in the transaction of the change they record, chained to the one
/// before, and keeps the head file (outside the database) at the newest committed entry.
///
/// The handlers append through `GatePassApplication.audit`; the request's `CommitEffects`
/// moves the head after the commit.
final class AuditLog: Sendable {
    let chain: AuditChain
    let headPath: String
    /// The head last written, so a slower thread never moves it back.
    private let writtenHead = Locked<Int64>(0)
    /// Head writes (an fsync each) run here, off the writer's thread, so a commit never waits
    /// for one; requests while one is waiting fold into it (it reads the newest entry when it runs).
    private let headQueue = DispatchQueue(label: "gatepass.audit-head")
    private let headWritePending = Locked<Bool>(false)

    init(chain: AuditChain, headPath: String) {
        self.chain = chain
        self.headPath = headPath
    }

    /// Appends `entry` after the newest one. Runs inside the writer's transaction, so no other
    /// append can come between the read of the newest link and this insert.
    @discardableResult
    func append(_ entry: AuditEntry, organizationId: String?, _ tx: any Transaction) throws -> StoredAuditEntry {
        let previous = try tx.audit.latestLink()
        let hashes = AuditChain.fieldHashes(entry, organizationId: organizationId)
        let link = chain.link(previous: previous?.link ?? AuditChain.genesis, hashes: hashes)
        var stored = StoredAuditEntry(seq: (previous?.seq ?? 0) + 1, entry: entry, organizationId: organizationId,
                                      erased: false, fieldHashes: hashes, link: link)
        try tx.audit.append(stored)
        guard let written = try tx.audit.latestLink(), written.link == link else {
            throw APIError.internal("the audit entry just written is not the newest")
        }
        stored.seq = written.seq
        return stored
    }

    /// Moves the head soon, on its own queue; `failed` hears a head that could not be written.
    func scheduleHead(_ store: ServerDatabase, failed: @escaping @Sendable (any Error) -> Void) {
        let alreadyPending = headWritePending.withLock { (pending: inout Bool) -> Bool in
            defer { pending = true }
            return pending
        }
        guard !alreadyPending else { return }
        headQueue.async { [self] in
            headWritePending.withLock { $0 = false }
            do { try committed(store) } catch { failed(error) }
        }
    }

    /// Returns once every head write scheduled so far is done (at stop, and for tests).
    func waitForHead() { headQueue.sync {} }

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
