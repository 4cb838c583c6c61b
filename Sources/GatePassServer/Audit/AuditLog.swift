import Foundation
import GatePassCore

/// Appends audit entries in the transaction of the change they record, chained to the one
/// before, and keeps the head file (outside the database) at the newest committed entry.
///
/// The handlers append through `GatePassApplication.audit`; the request's `CommitEffects`
/// moves the head after the commit. A process writes the head only after it has taken the
/// existing one over (`takeOver`), and only along a chain it has followed from that head: it
/// never writes over the evidence of entries removed behind its back.
final class AuditLog: Sendable {
    let chain: AuditChain
    let headPath: String
    private let anchor = Locked<Anchor>(.notTakenOver)
    /// Head writes (an fsync each) run here, off the writer's thread, so a commit never waits
    /// for one; requests while one is waiting fold into it (it reads the newest entry when it runs).
    private let headQueue = DispatchQueue(label: "gatepass.audit-head")
    private let headWritePending = Locked<Bool>(false)

    /// Where this process may move the head from.
    private enum Anchor: Sendable {
        /// `takeOver` has not run: the head is never written.
        case notTakenOver
        /// The head this process last wrote or took over (nil: the log was empty then).
        case head(AuditHead?)
        /// The log no longer holds that head as written: the head stays as it is, as evidence.
        case halted
    }

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
    /// undid; it may lag (a crash between commit and this write), never lead. The entries from
    /// the head this process last wrote up to the newest must chain from it; if they do not
    /// (that head's entry was removed or replaced), the head is left as it is and the error
    /// says so, once: later calls write nothing.
    func committed(_ store: ServerDatabase) throws {
        try anchor.withLock { (anchor: inout Anchor) throws in
            guard case .head(let current) = anchor else { return }
            guard let newest = try store.read({ tx in try tx.audit.latestLink() }), newest.seq > current?.seq ?? 0 else {
                return
            }
            guard let followed = try follow(store, from: current, to: newest.seq) else {
                anchor = .halted
                throw AuditHeadError(path: headPath, problem: "was not moved: the log no longer chains from entry \(current?.seq ?? 0), which the head names (entries removed or replaced); run gatepass audit verify")
            }
            let head = AuditHead.signed(seq: followed.seq, link: followed.link, chain)
            try head.save(path: headPath)
            anchor = .head(head)
        }
    }

    /// Follows the log from `head` (nil: from the first entry) up to at least `seq`: the entry
    /// the head names must still be there with its link, and each later one must follow.
    /// Returns the last entry followed, or nil when the chain does not hold.
    private func follow(_ store: ServerDatabase, from head: AuditHead?, to seq: Int64) throws -> (seq: Int64, link: [UInt8])? {
        var follower: ChainFollower
        var position: Int64
        if let head {
            guard let first = try store.read({ tx in try tx.audit.entries(after: head.seq - 1, limit: 1) }).first,
                  first.seq == head.seq, first.link == head.link
            else { return nil }
            let before = try store.read { tx in try tx.audit.linkBefore(seq: head.seq) }
            // Whether the head's own entry is tagged decides whether older links may follow it.
            let tagged = chain.link(previous: before ?? AuditChain.genesis, hashes: first.fieldHashes) == first.link
            follower = ChainFollower(chain: chain, after: head.link, sawTagged: tagged)
            position = head.seq
        } else {
            follower = ChainFollower(chain: chain)
            position = 0
        }
        var last = (seq: position, link: head?.link ?? AuditChain.genesis)
        while position < seq {
            let page = try store.read { tx in try tx.audit.entries(after: position, limit: 1000) }
            if page.isEmpty { break }
            for stored in page {
                guard follower.follows(stored) else { return nil }
                last = (stored.seq, stored.link)
            }
            position = last.seq
        }
        return last.seq >= seq ? last : nil
    }

    // MARK: - Taking the head over at start

    /// What `takeOver` found and did (for the log and tests).
    enum TakeOver: Sendable, Equatable {
        /// No entry and no head: a new log.
        case empty
        /// The head names the newest entry.
        case current(seq: Int64)
        /// The head lagged (a crash between a commit and its head write, or another server's
        /// entries): it now names the newest entry.
        case movedForward(from: Int64, to: Int64)
        /// An unsigned head of an earlier version, signed now (`audit-head.upgrade` written).
        case upgraded(from: Int64, to: Int64)
        /// A head that did not hold, replaced on request (`audit-head.recreate` written).
        case recreated(problem: String, at: Int64)

        /// What the server logs at start; nil when there is nothing to say.
        var logLine: String? {
            switch self {
            case .empty, .current: nil
            case let .movedForward(from, to): "audit head moved forward from entry \(from) to entry \(to)"
            case let .upgraded(from, to): "audit head of an earlier version (entry \(from)) signed; recorded as entry \(to) (audit-head.upgrade)"
            case let .recreated(problem, at): "audit head re-created at entry \(at) (audit-head.recreate); the old one \(problem)"
            }
        }
    }

    /// Takes over the head left by earlier runs, before this process writes any entry: it must
    /// carry the audit key's signature, name an entry the log holds with the same link, and the
    /// entries after it must chain from it; then it is moved to the newest entry. An unsigned
    /// head of an earlier version is accepted only on a log no run of this version wrote to (so
    /// it cannot be forged later), and is then signed, with an `audit-head.upgrade` entry
    /// listing the entries earlier versions erased. A head that does not hold — missing on a log
    /// with entries, not signed, ahead of the log or naming another entry — stops the start,
    /// unless `recreate` (`serve --recreate-audit-head`, after a restore) asks for a new one,
    /// which is recorded as `audit-head.recreate` with what was found.
    /// - Parameter requirePrivate: refuse a head file its group or others may read or write.
    /// - Throws: `AuditHeadError` naming the problem and what to do.
    @discardableResult
    func takeOver(_ store: ServerDatabase, now: Date, recreate: Bool, requirePrivate: Bool) throws -> TakeOver {
        let file = try AuditHead.read(path: headPath, requirePrivate: requirePrivate)
        // The head first, then the log: another process appending meanwhile makes the head lag, never lead.
        let newest = try store.read { tx in try tx.audit.latestLink() }
        let problem: String?
        switch (file, newest) {
        case (nil, nil):
            anchor.withLock { $0 = .head(nil) }
            return .empty
        case (nil, let newest?):
            problem = "is missing, but the log has entries up to \(newest.seq)"
        case (let head?, _):
            problem = try self.problem(with: head, newest: newest?.seq ?? 0, store)
        }
        if let problem {
            guard recreate else {
                throw AuditHeadError(path: headPath, problem: problem + ". If the database was restored from a backup (or this is a new server of a shared PostgreSQL database), start gatepass serve once with --recreate-audit-head, which records that in the log; otherwise entries may have been removed: run gatepass audit verify")
            }
            var before: [String: JSONValue]?
            if let file { before = ["headSeq": .integer(file.seq)] }
            var olderLog = false
            if let newest { olderLog = try !isTagged(newest.seq, store) }
            let entry = try appendOwn(.auditHeadRecreate, before: before,
                                      after: ["problem": .string(problem), "logEnd": .integer(newest?.seq ?? 0)],
                                      listingFormerErasures: olderLog, store, now: now)
            try writeAnchored(entry)
            return .recreated(problem: problem, at: entry.seq)
        }
        let head = file!, last = newest!.seq
        if head.signature == nil {
            // Only a log no run of this version wrote to (`problem` checked that no tagged link
            // follows) keeps an unsigned head: it is signed now, and recorded.
            let entry = try appendOwn(.auditHeadUpgrade, before: nil, after: ["headSeq": .integer(head.seq), "logEnd": .integer(last)],
                                      listingFormerErasures: true, store, now: now)
            try writeAnchored(entry)
            return .upgraded(from: head.seq, to: entry.seq)
        }
        guard last > head.seq else {
            anchor.withLock { $0 = .head(head) }
            return .current(seq: head.seq)
        }
        let moved = AuditHead.signed(seq: last, link: newest!.link, chain)
        try moved.save(path: headPath)
        anchor.withLock { $0 = .head(moved) }
        return .movedForward(from: head.seq, to: last)
    }

    /// Why `head` cannot be taken over, or nil when it can (see `takeOver`).
    private func problem(with head: AuditHead, newest: Int64, _ store: ServerDatabase) throws -> String? {
        if head.signature != nil && !head.isSigned(by: chain) {
            return "does not carry the audit key's signature (it was not written by a server with this secret)"
        }
        guard newest >= head.seq else { return "names entry \(head.seq), but the log ends at entry \(newest)" }
        guard try follow(store, from: head, to: newest) != nil else {
            return "names entry \(head.seq), but the log does not hold that entry as written, or the entries after it do not follow it"
        }
        if head.signature == nil, try isTagged(newest, store) {
            return "is in the unsigned format of an earlier version, but this version has written to the log since"
        }
        return nil
    }

    /// Whether the entry `seq` has a link of this version (not `legacyLink`).
    private func isTagged(_ seq: Int64, _ store: ServerDatabase) throws -> Bool {
        let (entry, before) = try store.read { tx in
            (try tx.audit.entries(after: seq - 1, limit: 1).first, try tx.audit.linkBefore(seq: seq))
        }
        guard let entry else { return false }
        return chain.link(previous: before ?? AuditChain.genesis, hashes: entry.fieldHashes) == entry.link
    }

    /// Appends one of the server's own entries about the head (actor `system`, no
    /// organization). The first entry this version writes to an older log lists the entries
    /// that earlier versions erased, which no record of theirs lists.
    private func appendOwn(_ action: AuditAction, before: [String: JSONValue]?, after: [String: JSONValue],
                           listingFormerErasures: Bool, _ store: ServerDatabase, now: Date) throws -> StoredAuditEntry {
        try store.write { [self] tx in
            var after = after
            if listingFormerErasures {
                let erased = try tx.audit.erasedSeqs()
                if !erased.isEmpty { after[AuditChain.erasedEntriesKey] = .string(SequenceRanges.text(erased)) }
            }
            let entry = AuditEntry(id: newIdentifier(now: now), at: now, actorKind: .system, actorId: nil,
                                   action: action.rawValue, entity: action.entity, entityId: nil,
                                   before: before.map { JSONValue.object($0).canonicalText },
                                   after: JSONValue.object(after).canonicalText)
            return try append(entry, organizationId: nil, tx)
        }
    }

    private func writeAnchored(_ entry: StoredAuditEntry) throws {
        let head = AuditHead.signed(seq: entry.seq, link: entry.link, chain)
        try head.save(path: headPath)
        anchor.withLock { $0 = .head(head) }
    }
}
