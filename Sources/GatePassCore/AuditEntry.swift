import Foundation

/// Who made a change the audit log records (api.md "Audit log": `actorKind`).
public enum AuditActorKind: String, Codable, Sendable, CaseIterable {
    /// A person, by login or by a scanner token they made.
    case user
    /// A gate's own credential (an enrolled kiosk), not a person.
    case kiosk
    /// The server itself: retention, automatic check-out.
    case system
}

/// What an audit entry records (api.md "Audit log" lists the least set). The part before the dot
/// is the entry's `entity`. Declared once here, so the server writes and the console filters by
/// the same names.
public enum AuditAction: String, Codable, Sendable, CaseIterable {
    case visitorCreate = "visitor.create"
    case visitorUpdate = "visitor.update"
    case visitorCancel = "visitor.cancel"
    case visitorApprove = "visitor.approve"
    case visitorReject = "visitor.reject"
    case visitorInvite = "visitor.invite"
    /// A scan at the gate asked an approver (the visitor became AWAITING_APPROVAL).
    case visitorRequestApproval = "visitor.request-approval"
    case visitorCheckIn = "visitor.checkin"
    case visitorCheckOut = "visitor.checkout"
    case visitorWalkIn = "visitor.walk-in"
    case blocklistAdd = "blocklist.add"
    case blocklistRemove = "blocklist.remove"
    case userCreate = "user.create"
    case userUpdate = "user.update"
    case organizationUpdate = "organization.update"
    case checkpointCreate = "checkpoint.create"
    case checkpointUpdate = "checkpoint.update"
    case scannerTokenCreate = "scanner-token.create"
    case scannerTokenRevoke = "scanner-token.revoke"
    /// An admin made a kiosk's one-time enrolment code.
    case kioskCreate = "kiosk.create"
    /// A kiosk used its code and got its credential (the actor is the kiosk).
    case kioskEnrol = "kiosk.enrol"
    case sessionLogin = "session.login"
    case sessionLogout = "session.logout"
    case mailTest = "mail.test"
    case retentionRun = "retention.run"
    /// One visitor anonymised at once (a data-subject request, `POST /api/admin/visitors/:id/erase`).
    /// Its entity is the erase request (`erase-request`), not the visitor: it records an erasure.
    case visitorErase = "visitor.erase"
    /// Reads of personal data in bulk (api.md: CSV exports and `visitor.export` are audited too).
    case scanHistoryExport = "scan-history.export"
    case auditExport = "audit.export"
    /// Everything stored about one visitor, read out (`GET /api/admin/visitors/:id/export`).
    case visitorExport = "visitor.export"
    /// The server took over an audit head in the unsigned format of an earlier version and
    /// signed it (`system`, at the first start after the upgrade).
    case auditHeadUpgrade = "audit-head.upgrade"
    /// `gatepass serve --recreate-audit-head` wrote a new head where the old one was missing or
    /// did not match the log (after a restore), saying what it found.
    case auditHeadRecreate = "audit-head.recreate"

    /// The kind of thing the action changes: `visitor` for `visitor.create`; an erase request
    /// records an erasure, not a change of the visitor.
    public var entity: String {
        self == .visitorErase ? "erase-request" : String(rawValue.prefix(while: { $0 != "." }))
    }
}

/// One audited change, as `GET /api/admin/audit` lists it. `before`/`after` hold the changed
/// fields' values (canonical JSON objects, kept as their text: the chain hashes the text), or
/// null when there are none or retention erased them. On the wire they are JSON objects.
public struct AuditEntry: Codable, Sendable, Equatable {
    public var id: String
    public var at: Date
    public var actorKind: AuditActorKind
    public var actorId: String?
    public var action: String
    public var entity: String
    public var entityId: String?
    public var before: String?
    public var after: String?

    public init(id: String, at: Date, actorKind: AuditActorKind, actorId: String?, action: String, entity: String,
                entityId: String?, before: String?, after: String?) {
        self.id = id; self.at = at; self.actorKind = actorKind; self.actorId = actorId; self.action = action
        self.entity = entity; self.entityId = entityId; self.before = before; self.after = after
    }

    private enum CodingKeys: String, CodingKey {
        case id, at, actorKind, actorId, action, entity, entityId, before, after
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        id = try container.decode(String.self, forKey: .id)
        at = try container.decode(Timestamp.self, forKey: .at).date
        actorKind = try container.decode(AuditActorKind.self, forKey: .actorKind)
        actorId = try container.decodeIfPresent(String.self, forKey: .actorId)
        action = try container.decode(String.self, forKey: .action)
        entity = try container.decode(String.self, forKey: .entity)
        entityId = try container.decodeIfPresent(String.self, forKey: .entityId)
        before = try Self.values(container, .before)
        after = try Self.values(container, .after)
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(id, forKey: .id)
        try container.encode(Timestamp(at), forKey: .at)
        try container.encode(actorKind, forKey: .actorKind)
        try container.encode(actorId, forKey: .actorId)
        try container.encode(action, forKey: .action)
        try container.encode(entity, forKey: .entity)
        try container.encode(entityId, forKey: .entityId)
        for (text, key) in [(before, CodingKeys.before), (after, .after)] {
            // Stored text that is not JSON is a fault of the store, never passed on as a string.
            guard let text else { try container.encodeNil(forKey: key); continue }
            guard let value = JSONValue(text: text), case .object = value else {
                throw EncodingError.invalidValue(text, .init(codingPath: [key], debugDescription: "audit values are not a JSON object"))
            }
            try container.encode(value, forKey: key)
        }
    }

    private static func values(_ container: KeyedDecodingContainer<CodingKeys>, _ key: CodingKeys) throws -> String? {
        guard let value = try container.decodeIfPresent(JSONValue.self, forKey: key), value != .null else { return nil }
        guard case .object = value else {
            throw DecodingError.dataCorruptedError(forKey: key, in: container, debugDescription: "must be a JSON object or null")
        }
        return value.canonicalText
    }
}
