/// Why a user change is refused: a rule of who may do what (403), or the state of the
/// organization (409: the last OWNER).
public enum UserRuleViolation: Error, Sendable, Equatable, CustomStringConvertible {
    case forbidden(String)
    case conflict(String)

    public var description: String {
        switch self {
        case .forbidden(let message), .conflict(let message): message
        }
    }
}

/// Who may create and change which users (api.md "Users, checkpoints, scanner tokens"):
/// a pure judgement, so every creator × role and every change is tested without a server.
public enum UserRules {
    /// Whether `creator` may create a user with `role`.
    public static func checkCreation(by creator: Role, of role: Role) throws(UserRuleViolation) {
        guard creator.assignableRoles.contains(role) else {
            throw .forbidden("\(creator.rawValue) may create \(names(creator.assignableRoles)) users, not \(role.rawValue)")
        }
    }

    /// Judges `changes` by `caller` to `target`.
    /// - Parameters:
    ///   - targetDisabled: whether the target is disabled now.
    ///   - activeOwners: the organization's OWNERs who are not disabled, the target included.
    /// The last OWNER is judged before the caller's own rights, so an only OWNER who tries to
    /// step down learns why it cannot.
    public static func checkUpdate(by caller: Profile, of target: Profile, targetDisabled: Bool, changes: UserChanges,
                                   activeOwners: Int) throws(UserRuleViolation) {
        let assignable = caller.role.assignableRoles
        guard assignable.contains(target.role) else {
            throw .forbidden("\(caller.role.rawValue) may change \(names(assignable)) users, not \(target.role.rawValue)")
        }
        let changesRole = changes.role.map { $0 != target.role } ?? false
        let changesDisabled = changes.disabled.map { $0 != targetDisabled } ?? false
        if let role = changes.role, changesRole, !assignable.contains(role) {
            throw .forbidden("\(caller.role.rawValue) may give the roles \(names(assignable)), not \(role.rawValue)")
        }
        let stopsBeingAnOwner = changesRole || changes.disabled == true
        if target.role == .owner, !targetDisabled, stopsBeingAnOwner, activeOwners <= 1 {
            throw .conflict("this is the organization's last OWNER: make another user OWNER first")
        }
        if caller.id == target.id, changesRole || changesDisabled {
            throw .forbidden("nobody changes their own role or disabled; ask another OWNER or ADMIN")
        }
    }

    /// The roles in api.md's order, for messages.
    static func names(_ roles: Set<Role>) -> String {
        Role.allCases.filter(roles.contains).map(\.rawValue).joined(separator: ", ")
    }
}
