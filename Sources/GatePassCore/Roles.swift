/// A user's role in its organization (api.md "Roles and principals").
public enum Role: String, Codable, Sendable, CaseIterable {
    case owner = "OWNER"
    case admin = "ADMIN"
    case approver = "APPROVER"
    case platformAdmin = "PLATFORM_ADMIN"

    /// The key the verify-otp answer puts the profile under.
    public var profileKey: String {
        switch self {
        case .owner: "owner"
        case .admin: "admin"
        case .approver: "approver"
        case .platformAdmin: "platformAdmin"
        }
    }

    public var managesOrganization: Bool { self == .owner || self == .admin }
}

/// Who is behind a request, as far as permissions care.
public enum PrincipalKind: Sendable, Hashable {
    case anonymous
    case user(Role, canScanCheckpoint: Bool)
    case scanner

    /// Whether this principal may obtain a scanner token.
    public var mayScan: Bool {
        switch self {
        case .user(let role, let canScan): role.managesOrganization || (role == .approver && canScan)
        case .anonymous, .scanner: false
        }
    }
}

