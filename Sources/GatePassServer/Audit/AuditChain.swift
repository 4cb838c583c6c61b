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

    /// The link of an entry whose field hashes are `hashes`, after `previous`.
    func link(previous: [UInt8], hashes: [[UInt8]]) -> [UInt8] {
        HMACSHA256.authenticate(key: key, message: previous + hashes.flatMap { $0 })
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
