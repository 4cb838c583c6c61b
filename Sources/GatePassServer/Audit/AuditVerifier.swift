import Foundation
import GatePassCore

/// What `gatepass audit verify` finds: the chain whole, or the first entry that breaks it.
public enum AuditVerdict: Sendable, Equatable, CustomStringConvertible {
    case intact(entries: Int)
    /// An entry's values no longer hash to what its link covers.
    case altered(seq: Int64, id: String, field: String)
    /// An entry's link does not follow from the one before: an entry was inserted here, or the
    /// one before it removed (or its stored hashes or link changed).
    case broken(seq: Int64, id: String)
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
        case let .truncated(last, head): "the newest entries were removed: the log ends at entry \(last), but entry \(head) was written"
        case let .headMismatch(seq): "entry \(seq) is not the entry recorded as the newest: it was replaced"
        }
    }
}

/// Walks the whole chain from the first entry, then checks its end against the head file.
enum AuditVerifier {
    static func verify(_ store: ServerDatabase, chain: AuditChain, head: AuditHead?) throws -> AuditVerdict {
        var previous = AuditChain.genesis
        var lastSeq: Int64 = 0
        var count = 0
        var linkAtHead: [UInt8]?
        while true {
            let page = try store.read { tx in try tx.audit.entries(after: lastSeq, limit: 1000) }
            if page.isEmpty { break }
            for stored in page {
                let recomputed = AuditChain.fieldHashes(stored.entry, organizationId: stored.organizationId)
                for (index, name) in AuditChain.fieldNames.enumerated() {
                    // Erased values are gone; their recorded hashes stand for them.
                    if stored.erased && AuditChain.erasableFields.contains(index) { continue }
                    if recomputed[index] != stored.fieldHashes[index] {
                        return .altered(seq: stored.seq, id: stored.entry.id, field: name)
                    }
                }
                if chain.link(previous: previous, hashes: stored.fieldHashes) != stored.link {
                    return .broken(seq: stored.seq, id: stored.entry.id)
                }
                previous = stored.link
                lastSeq = stored.seq
                count += 1
                if stored.seq == head?.seq { linkAtHead = stored.link }
            }
        }
        if let head {
            guard lastSeq >= head.seq else { return .truncated(lastSeq: lastSeq, headSeq: head.seq) }
            guard linkAtHead == head.link else { return .headMismatch(seq: head.seq) }
        }
        return .intact(entries: count)
    }
}
