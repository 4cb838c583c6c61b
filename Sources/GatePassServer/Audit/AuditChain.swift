import Foundation
import GatePassCore
import GatePassCrypto

/// The audit log's tamper evidence (api.md "Audit log"): every entry's link is an HMAC, under a
/// key kept outside the database, of the previous entry's link and the SHA-256 hashes of the
/// entry's field values — not the values, so retention can erase `before`/`after` and keep their
/// hashes without breaking the chain. Nothing here knows SQL: any backend stores the same bytes.
struct AuditChain: Sendable {
    let key: [UInt8]

    /// The link before the first entry.
    static let genesis = [UInt8](repeating: 0, count: 32)

    /// The fields a link covers, in this order. Changing the order or the set breaks every
    /// stored chain, so it is fixed here once.
    static let fieldNames = ["id", "organizationId", "at", "actorKind", "actorId", "action", "entity", "entityId",
                             "before", "after"]
    /// Where `before` and `after` sit among the hashes (the values retention may erase).
    static let erasableFields: Set<Int> = [8, 9]

    /// One field's hash: its name, then whether it has a value, then the value's UTF-8 bytes,
    /// so an absent value and an empty one differ and no value can pass for another field's.
    static func fieldHash(_ name: String, _ value: String?) -> [UInt8] {
        var message = Array(name.utf8) + [0]
        if let value { message += [1] + Array(value.utf8) } else { message.append(0) }
        return SHA256.hash(message)
    }

    /// The values of an entry in `fieldNames` order (times as decimal milliseconds).
    static func fieldValues(_ entry: AuditEntry, organizationId: String?) -> [String?] {
        [entry.id, organizationId, String(entry.at.milliseconds), entry.actorKind.rawValue, entry.actorId, entry.action,
         entry.entity, entry.entityId, entry.before, entry.after]
    }

    static func fieldHashes(_ entry: AuditEntry, organizationId: String?) -> [[UInt8]] {
        zip(fieldNames, fieldValues(entry, organizationId: organizationId)).map { fieldHash($0, $1) }
    }

    /// The link of an entry whose field hashes are `hashes`, after `previous`. The message
    /// begins with a version tag that links of earlier versions lack (`legacyLink`): a log this
    /// version has written to can never be passed off as one it has not (see `AuditHead`).
    func link(previous: [UInt8], hashes: [[UInt8]]) -> [UInt8] {
        HMACSHA256.authenticate(key: key, message: Array(Self.linkVersionTag.utf8) + previous + hashes.flatMap { $0 })
    }

    /// The link as versions before signed heads made it (no tag): accepted only for entries
    /// older than every tagged one.
    func legacyLink(previous: [UInt8], hashes: [[UInt8]]) -> [UInt8] {
        HMACSHA256.authenticate(key: key, message: previous + hashes.flatMap { $0 })
    }

    private static let linkVersionTag = "gatepass-audit-link-2\u{0}"

    /// The HMAC a head file carries: its entry's number and link, under the chain's key, with
    /// a tag of its own so it can never be taken for a link.
    func headSignature(seq: Int64, link: [UInt8]) -> [UInt8] {
        HMACSHA256.authenticate(key: key, message: Array("gatepass-audit-head\u{0}\(seq)\u{0}".utf8) + link)
    }

    // MARK: - Erasure

    /// The actions whose `before`/`after` retention and an erase request erase (they may hold a
    /// visitor's personal data). Fixed: the verifier reads this table, and each link covers its
    /// entry's action, so an erased entry of any other action is tampering.
    static let erasableActions: Set<String> = Set([
        AuditAction.visitorCreate, .visitorUpdate, .visitorCancel, .visitorApprove, .visitorReject, .visitorInvite,
        .visitorRequestApproval, .visitorCheckIn, .visitorCheckOut, .visitorWalkIn,
    ].map(\.rawValue))

    /// What versions before erasure records erased: every entry whose entity id was the
    /// visitor's (its `visitor.erase` and `visitor.export` too). Accepted only for entries that
    /// an `audit-head.*` entry lists (the first entry this version wrote to an older log).
    static let formerlyErasableActions: Set<String> = erasableActions
        .union([AuditAction.visitorErase.rawValue, AuditAction.visitorExport.rawValue])

    /// The entries that record erasures, listing in `after.erasedEntries` the numbers of the
    /// entries erased in their transaction: a retention run and an erase request. None of them
    /// is erasable, so retention never erases the record of its own erasures.
    static let erasureRecordActions: Set<String> = [AuditAction.retentionRun.rawValue, AuditAction.visitorErase.rawValue]
    /// The entries that list erasures made before erasure records existed (see `formerlyErasableActions`).
    static let legacyErasureRecordActions: Set<String> = [AuditAction.auditHeadUpgrade.rawValue,
                                                          AuditAction.auditHeadRecreate.rawValue]

    /// The key of an erasure record's `after` that lists the entries it erased.
    static let erasedEntriesKey = "erasedEntries"
}

/// Entry numbers written compactly, ascending: `"3,5-9,12"` (a range for each run of
/// consecutive numbers), as an erasure record lists the entries it erased.
enum SequenceRanges {
    static func text(_ numbers: [Int64]) -> String {
        var runs: [ClosedRange<Int64>] = []
        for number in Set(numbers).sorted() {
            if let last = runs.last, last.upperBound + 1 == number {
                runs[runs.count - 1] = last.lowerBound...number
            } else {
                runs.append(number...number)
            }
        }
        return runs.map { $0.lowerBound == $0.upperBound ? "\($0.lowerBound)" : "\($0.lowerBound)-\($0.upperBound)" }
            .joined(separator: ",")
    }

    /// The numbers of a text `text(_:)` wrote; nil for anything else (not ascending, a range
    /// that is not one, a number not in canonical decimal).
    static func numbers(_ text: String) -> [ClosedRange<Int64>]? {
        var ranges: [ClosedRange<Int64>] = []
        for part in text.split(separator: ",", omittingEmptySubsequences: false) {
            let bounds = part.split(separator: "-", omittingEmptySubsequences: false)
            guard (1...2).contains(bounds.count) else { return nil }
            let values = bounds.compactMap { bound -> Int64? in
                guard let value = Int64(bound), value > 0, String(value) == bound else { return nil }
                return value
            }
            guard values.count == bounds.count, values.first! <= values.last!, bounds.count == 1 || values[0] < values[1],
                  ranges.last.map({ $0.upperBound + 1 < values[0] }) ?? true
            else { return nil }
            ranges.append(values[0]...values.last!)
        }
        return ranges
    }
}

/// An entry as stored: its values (possibly erased), the hashes they had, and its link.
struct StoredAuditEntry: Sendable, Equatable {
    var seq: Int64
    var entry: AuditEntry
    var organizationId: String?
    /// True once retention erased `before` and `after` (their hashes stay).
    var erased: Bool
    var fieldHashes: [[UInt8]]
    var link: [UInt8]
}
