import Foundation
import GatePassCore

/// What `gatepass audit verify` finds: the chain whole, or the first entry that breaks it.
public enum AuditVerdict: Sendable, Equatable, CustomStringConvertible {
    case intact(entries: Int)
    /// An entry's values no longer hash to what its link covers (or an erased entry holds values).
    case altered(seq: Int64, id: String, field: String)
    /// An entry's link does not follow from the one before: an entry was inserted here, or the
    /// one before it removed (or its stored hashes or link changed).
    case broken(seq: Int64, id: String)
    /// An entry is marked erased, but its action is one retention never erases.
    case notErasable(seq: Int64, id: String, action: String)
    /// An entry is marked erased, but no later entry records its erasure.
    case erasureUnrecorded(seq: Int64, id: String)
    /// The log has entries, but there is no head outside it to say where it ends.
    case headMissing(lastSeq: Int64)
    /// The head is in the unsigned format of an earlier version (`serve` signs it at start).
    case headUnsigned(seq: Int64)
    /// The head's signature is not the audit key's: it was written without the secret.
    case headForged(seq: Int64)
    /// The database ends before the head kept outside it: the newest entries were removed.
    case truncated(lastSeq: Int64, headSeq: Int64)
    /// The entry the head names is not the one it recorded.
    case headMismatch(seq: Int64)

    public var isIntact: Bool { if case .intact = self { true } else { false } }

    public var description: String {
        switch self {
        case .intact(let entries): "the audit log is intact (\(entries) entries)"
        case let .altered(seq, id, field): "entry \(seq) (\(id)) was altered: its \(field) is not what was recorded"
        case let .broken(seq, id): "entry \(seq) (\(id)) does not follow the entry before it: an entry was inserted here or the one before it removed"
        case let .notErasable(seq, id, action): "entry \(seq) (\(id)) is marked erased, but its action \(action) is never erased: its values were removed by someone else"
        case let .erasureUnrecorded(seq, id): "entry \(seq) (\(id)) is marked erased, but no later entry records that erasure: its values were removed by someone else"
        case let .headMissing(last): "the audit head is missing, but the log has entries up to \(last): the newest entries may have been removed with it"
        case let .headUnsigned(seq): "the audit head (entry \(seq)) is in the unsigned format of an earlier version: start gatepass serve once to sign it"
        case let .headForged(seq): "the audit head (entry \(seq)) does not carry the audit key's signature: it was not written by the server"
        case let .truncated(last, head): "the newest entries were removed: the log ends at entry \(last), but entry \(head) was written"
        case let .headMismatch(seq): "entry \(seq) is not the entry recorded as the newest: it was replaced"
        }
    }
}

/// Follows links along the log: each entry's link must come from the one before. Entries of
/// earlier versions (untagged links, `AuditChain.legacyLink`) are accepted only until the
/// first tagged one.
struct ChainFollower {
    let chain: AuditChain
    private(set) var previous: [UInt8]
    /// Whether a tagged link has been seen (from then on, only tagged links follow).
    private(set) var sawTagged: Bool

    init(chain: AuditChain, after link: [UInt8] = AuditChain.genesis, sawTagged: Bool = false) {
        self.chain = chain
        previous = link
        self.sawTagged = sawTagged
    }

    /// Whether `stored` follows; if it does, it becomes the previous entry.
    mutating func follows(_ stored: StoredAuditEntry) -> Bool {
        if chain.link(previous: previous, hashes: stored.fieldHashes) == stored.link {
            sawTagged = true
        } else if sawTagged || chain.legacyLink(previous: previous, hashes: stored.fieldHashes) != stored.link {
            return false
        }
        previous = stored.link
        return true
    }
}

/// Walks the whole chain from the first entry, then checks its end against the head file.
enum AuditVerifier {
    /// What is wrong with one entry on its own: a value that does not hash to what its link
    /// covers, or an erasure no entry of its action may have (values left, or an action never
    /// erased even by earlier versions). Nil when nothing is. The API checks every entry it
    /// serves with this; the links and the erasure records need the whole log (`verify`).
    static func problem(with stored: StoredAuditEntry) -> AuditVerdict? {
        let recomputed = AuditChain.fieldHashes(stored.entry, organizationId: stored.organizationId)
        for (index, name) in AuditChain.fieldNames.enumerated() {
            if stored.erased && AuditChain.erasableFields.contains(index) {
                // Erased values are gone (their recorded hashes stand for them): any value here
                // was put there afterwards.
                if (index == 8 ? stored.entry.before : stored.entry.after) != nil {
                    return .altered(seq: stored.seq, id: stored.entry.id, field: name)
                }
                continue
            }
            if recomputed[index] != stored.fieldHashes[index] {
                return .altered(seq: stored.seq, id: stored.entry.id, field: name)
            }
        }
        if stored.erased && !AuditChain.formerlyErasableActions.contains(stored.entry.action) {
            return .notErasable(seq: stored.seq, id: stored.entry.id, action: stored.entry.action)
        }
        return nil
    }

    /// The entries an erasure record lists (`AuditChain.erasureRecordActions` and
    /// `legacyErasureRecordActions`), or nil when `stored` is none or lists none.
    /// - Throws: `StoredDataError` for a record whose list cannot be read (the link covers it:
    ///   only this server wrote it).
    static func erasedEntries(listedBy stored: StoredAuditEntry) throws -> [ClosedRange<Int64>]? {
        let action = stored.entry.action
        guard AuditChain.erasureRecordActions.contains(action) || AuditChain.legacyErasureRecordActions.contains(action),
              let after = stored.entry.after, case .object(let members)? = JSONValue(text: after),
              let listed = members[AuditChain.erasedEntriesKey]
        else { return nil }
        guard case .string(let text) = listed, let ranges = SequenceRanges.numbers(text) else {
            throw StoredDataError("audit entry \(stored.seq) lists the entries it erased in a form this server does not write")
        }
        return ranges
    }

    static func verify(_ store: ServerDatabase, chain: AuditChain, head: AuditHead?) throws -> AuditVerdict {
        var follower = ChainFollower(chain: chain)
        var lastSeq: Int64 = 0
        var count = 0
        var linkAtHead: [UInt8]?
        // Erased entries no later record has listed yet: number → (id, action).
        var unrecorded: [Int64: (id: String, action: String)] = [:]
        while true {
            let page = try store.read { tx in try tx.audit.entries(after: lastSeq, limit: 1000) }
            if page.isEmpty { break }
            for stored in page {
                if let problem = problem(with: stored) { return problem }
                guard follower.follows(stored) else { return .broken(seq: stored.seq, id: stored.entry.id) }
                if stored.erased { unrecorded[stored.seq] = (stored.entry.id, stored.entry.action) }
                if let ranges = try erasedEntries(listedBy: stored) {
                    let legacy = AuditChain.legacyErasureRecordActions.contains(stored.entry.action)
                    for seq in unrecorded.keys.sorted() where seq < stored.seq && ranges.contains(where: { $0.contains(seq) }) {
                        let erased = unrecorded.removeValue(forKey: seq)!
                        // What this version erases is the fixed table; only the entry that took
                        // an older log over lists what earlier versions erased.
                        if !legacy && !AuditChain.erasableActions.contains(erased.action) {
                            return .notErasable(seq: seq, id: erased.id, action: erased.action)
                        }
                    }
                }
                lastSeq = stored.seq
                count += 1
                if stored.seq == head?.seq { linkAtHead = stored.link }
            }
        }
        if let first = unrecorded.keys.min(), let erased = unrecorded[first] {
            return .erasureUnrecorded(seq: first, id: erased.id)
        }
        guard let head else { return count == 0 ? .intact(entries: 0) : .headMissing(lastSeq: lastSeq) }
        guard head.signature != nil else { return .headUnsigned(seq: head.seq) }
        guard head.isSigned(by: chain) else { return .headForged(seq: head.seq) }
        guard lastSeq >= head.seq else { return .truncated(lastSeq: lastSeq, headSeq: head.seq) }
        guard linkAtHead == head.link else { return .headMismatch(seq: head.seq) }
        return .intact(entries: count)
    }
}
