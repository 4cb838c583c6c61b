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

/// One audited change, as `GET /api/admin/audit` lists it. `before`/`after` hold the changed
/// fields' values (canonical JSON objects), or null when there are none or retention erased them.
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
}
