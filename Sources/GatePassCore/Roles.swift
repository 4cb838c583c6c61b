/// A user's role in its organization (api.md "Roles and principals").
public enum Role: String, Codable, Sendable, CaseIterable {
    case owner = "OWNER"
    case admin = "ADMIN"
    case approver = "APPROVER"
    case platformAdmin = "PLATFORM_ADMIN"
    /// An employee who registers and follows its own visitors (those it registered or hosts).
    case host = "HOST"

    /// The key the verify-otp answer puts the profile under.
    public var profileKey: String {
        switch self {
        case .owner: "owner"
        case .admin: "admin"
        case .approver: "approver"
        case .platformAdmin: "platformAdmin"
        case .host: "host"
        }
    }

    public var managesOrganization: Bool { self == .owner || self == .admin }

    /// The roles a user of this role may give, when creating a user or changing one's role
    /// (api.md "Users"): an OWNER every role of an organization, an ADMIN every one below OWNER.
    /// PLATFORM_ADMIN is given on the database only (`gatepass user add --db`).
    public var assignableRoles: Set<Role> {
        switch self {
        case .owner: [.owner, .admin, .approver, .host]
        case .admin: [.admin, .approver, .host]
        case .approver, .platformAdmin, .host: []
        }
    }

    /// What a profile says of `canScanCheckpoint`, from the stored flag: OWNER and ADMIN may
    /// always scan, an APPROVER when the flag is set, nobody else.
    public func canScanCheckpoint(stored flag: Bool) -> Bool {
        switch self {
        case .owner, .admin: true
        case .approver: flag
        case .platformAdmin, .host: false
        }
    }
}

/// Who is behind a request, as far as permissions care.
public enum PrincipalKind: Sendable, Hashable {
    case anonymous
    case user(Role, canScanCheckpoint: Bool)
    case scanner

    /// Whether this principal may obtain a scanner token.
    public var mayScan: Bool {
        switch self {
        case .user(let role, let canScan): role.canScanCheckpoint(stored: canScan)
        case .anonymous, .scanner: false
        }
    }
}

