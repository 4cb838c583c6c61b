import Foundation
import GatePassCore

/// Who made a change, as the audit log names them (api.md: a user, a scanner token's gate, or
/// `system`).
struct AuditActor: Sendable, Equatable {
    var kind: AuditActorKind
    var id: String?

    /// The server itself (retention, automatic check-out, bootstrapping on the database file).
    static let system = AuditActor(kind: .system, id: nil)
}

extension Principal {
    /// A person's token, login or scanner, names the person: they answer for what it did. An
    /// enrolled kiosk's credential is no person's: it names the kiosk.
    var auditActor: AuditActor {
        if case .kiosk(let kioskId, _) = credential { return AuditActor(kind: .kiosk, id: kioskId) }
        return AuditActor(kind: .user, id: user.id)
    }
}

/// The `before`/`after` of one entry: canonical JSON objects (keys sorted) of the changed fields
/// only, or null. Values are encoded exactly as the API encodes them, so an entry reads like the
/// answers it sits beside.
struct AuditValues: Sendable, Equatable {
    var before: String?
    var after: String?

    static let none = AuditValues(before: nil, after: nil)

    /// A thing that did not exist before: every field it has.
    static func created(_ value: some Encodable) -> AuditValues {
        AuditValues(before: nil, after: canonical(fields(of: value)))
    }

    /// A thing that is gone now: every field it had.
    static func removed(_ value: some Encodable) -> AuditValues {
        AuditValues(before: canonical(fields(of: value)), after: nil)
    }

    /// The fields whose values differ between `old` and `new` (a field absent on one side counts
    /// as null there); nothing when they are equal.
    static func changed<T: Encodable>(from old: T, to new: T) -> AuditValues {
        changed(fields(of: old), fields(of: new))
    }

    /// `changed(from:to:)` for a visitor (every check-in's entry), from fields built directly
    /// (`Visitor.jsonFields`, held equal to the generic path's by the tests).
    static func changed(from old: Visitor, to new: Visitor) -> AuditValues {
        changed(old.jsonFields, new.jsonFields)
    }

    private static func changed(_ before: [String: JSONValue], _ after: [String: JSONValue]) -> AuditValues {
        var changedBefore: [String: JSONValue] = [:], changedAfter: [String: JSONValue] = [:]
        for key in Set(before.keys).union(after.keys) {
            let was = before[key] ?? .null, now = after[key] ?? .null
            guard was != now else { continue }
            changedBefore[key] = was
            changedAfter[key] = now
        }
        guard !changedAfter.isEmpty else { return .none }
        return AuditValues(before: canonical(changedBefore), after: canonical(changedAfter))
    }

    /// Facts that are not a stored thing's fields (the counts of a retention run).
    static func facts(_ value: some Encodable) -> AuditValues {
        AuditValues(before: nil, after: canonical(fields(of: value)))
    }

    /// An erasure's record (`retention.run`, `visitor.erase`): the counts, and the entries whose
    /// values it erased as `erasedEntries` (`"3,5-9"`; absent when none), which verification
    /// requires of every erased entry.
    static func erasure(_ erasure: Erasure) -> AuditValues {
        var members = fields(of: erasure.counts)
        if !erasure.auditEntries.isEmpty {
            members[AuditChain.erasedEntriesKey] = .string(SequenceRanges.text(erasure.auditEntries))
        }
        return AuditValues(before: nil, after: canonical(members))
    }

    /// The fields as the API encodes them (`JSONValue(encoding:)`: the handlers run on the
    /// writer's thread, where Foundation's encoder and parser cost more than the change itself).
    private static func fields(of value: some Encodable) -> [String: JSONValue] {
        // Our own Encodable types encode to objects; anything else is a programming error.
        guard let encoded = try? JSONValue(encoding: value), case .object(let members) = encoded else {
            preconditionFailure("an audited value must encode to a JSON object: \(type(of: value))")
        }
        return members
    }

    private static func canonical(_ members: [String: JSONValue]) -> String? {
        members.isEmpty ? nil : JSONValue.object(members).canonicalText
    }
}

extension GatePassApplication {
    /// Records one change in the transaction that makes it, so the entry and the change commit
    /// or roll back together (a refused request leaves no entry). The head file is moved after
    /// the commit (`runWrite` sees `effects.audited`).
    func audit(_ action: AuditAction, id entityId: String?, _ values: AuditValues, _ call: Call,
               organizationId: String? = nil, actor: AuditActor? = nil, _ tx: any Transaction) throws {
        try audit(action, id: entityId, values, by: actor ?? call.caller.auditActor,
                  organizationId: organizationId ?? call.principal?.organizationId, at: call.now, tx)
        call.effects.noteAudited()
    }

    /// The same for work that is not a request (periodic jobs): the caller moves the head after
    /// its commit with `auditLog.committed(store)`.
    func audit(_ action: AuditAction, id entityId: String?, _ values: AuditValues, by actor: AuditActor,
               organizationId: String?, at time: Date, _ tx: any Transaction) throws {
        let entry = AuditEntry(id: newIdentifier(), at: time, actorKind: actor.kind, actorId: actor.id,
                               action: action.rawValue, entity: action.entity, entityId: entityId,
                               before: values.before, after: values.after)
        try auditLog.append(entry, organizationId: organizationId, tx)
    }

    /// A bulk read of personal data (a CSV export, a visitor's export) is recorded in a write of
    /// its own before any of the data goes out: if the record cannot be written, nothing is read.
    func auditBulkRead(_ action: AuditAction, id entityId: String?, _ values: AuditValues, _ call: Call) throws {
        try store.write { tx in
            try self.audit(action, id: entityId, values, by: call.caller.auditActor,
                      organizationId: call.caller.organizationId, at: call.now, tx)
        }
        moveAuditHead()
    }

    /// After a commit that appended entries: the head file follows the newest committed entry,
    /// soon after, off the writer's thread. A failure is logged, not answered: the change is
    /// committed, and the head lags (which `audit verify` allows) until the next entry moves it.
    func moveAuditHead() {
        auditLog.scheduleHead(store) { [logSink] error in logSink.log("the audit head could not be written: \(error)") }
    }
}
