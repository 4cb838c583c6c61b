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

/// Every route of api.md. The raw value is the route as logs and metrics name it.
public enum APIRoute: String, Sendable, CaseIterable {
    case authSendOTP = "POST /api/auth/send-otp"
    case authVerifyOTP = "POST /api/auth/verify-otp"
    case authDevPeekOTP = "GET /api/auth/dev-peek-otp"
    case authMe = "GET /api/auth/me"
    case authLogout = "POST /api/auth/logout"

    case visitorsList = "GET /api/visitors"
    case visitorsCreate = "POST /api/visitors"
    case visitorsAdminMe = "GET /api/visitors/admin-me"
    case visitorsGet = "GET /api/visitors/:id"
    case visitorsCancel = "POST /api/visitors/:id/cancel"
    case visitorsApprove = "POST /api/visitors/:id/approve-scan"
    case visitorsReject = "POST /api/visitors/:id/reject-scan"
    case visitorsPass = "GET /api/visitors/:id/pass.svg"
    case visitorsDeviceRegister = "POST /api/visitors/devices/register"
    case visitorsDeviceUnregister = "POST /api/visitors/devices/unregister"

    case approverMe = "GET /api/approver/me"
    case approverList = "GET /api/approver/visitors"
    case approverGet = "GET /api/approver/visitors/:id"
    case approverApprove = "POST /api/approver/visitors/:id/approve"
    case approverReject = "POST /api/approver/visitors/:id/reject"
    case approverDeviceRegister = "POST /api/approver/devices/register"
    case approverDeviceUnregister = "POST /api/approver/devices/unregister"

    case scannerToken = "POST /api/visitor-scanner/token"
    case scannerStats = "GET /api/visitor-scanner/stats"
    case scannerHistory = "GET /api/visitor-scanner/scan-history"
    case scannerCheckIn = "POST /api/visitor-scanner/checkin"
    case scannerCheckOut = "POST /api/visitor-scanner/checkout"
    case scannerLookup = "GET /api/visitor-scanner/lookup/:query"
    case scannerWalkIn = "POST /api/visitor-scanner/walk-in-arrived"
    case scannerOnSite = "GET /api/visitor-scanner/on-site"
    case scannerExpected = "GET /api/visitor-scanner/expected"

    case adminHistoryCSV = "GET /api/admin/scan-history.csv"
    case checkpointsList = "GET /api/checkpoints"
    case checkpointsCreate = "POST /api/checkpoints"

    case eventsStream = "GET /api/events"
    case notificationsList = "GET /api/notifications"
    case notificationsRead = "POST /api/notifications/:id/read"
    case notificationsDelete = "DELETE /api/notifications/:id"
    /// Not in api.md: what `gatepass push-test --server` and `gatepass push-deliveries --server` call.
    case adminPushTest = "POST /api/admin/push-test"
    case adminPushDeliveries = "GET /api/admin/push-deliveries"

    case healthz = "GET /api/healthz"
    case metrics = "GET /metrics"

    public var method: String { String(rawValue.prefix(while: { $0 != " " })) }
    public var pathPattern: String { String(rawValue.drop(while: { $0 != " " }).dropFirst()) }
}

/// The answer of the permission table for one principal on one route.
public enum Access: Sendable, Equatable {
    case allowed
    /// No or an invalid credential: 401.
    case unauthenticated
    /// A valid credential of the wrong kind or role: 403.
    case forbidden
}

/// The permission table (route × principal). The single place that says who may call what;
/// the server consults it before any handler runs, and tests walk all of it.
public enum Permissions {
    private enum Rule {
        case anyone
        case users(Set<Role>)
        case scannerAnd(Set<Role>)
        case scannerIssuers
    }

    private static let managers: Set<Role> = [.owner, .admin]
    private static let readers: Set<Role> = [.owner, .admin, .platformAdmin]
    private static let allUsers = Set(Role.allCases)

    private static func rule(for route: APIRoute) -> Rule {
        switch route {
        case .authSendOTP, .authVerifyOTP, .authDevPeekOTP, .healthz, .metrics: .anyone
        case .authMe, .authLogout: .users(allUsers)
        case .visitorsList, .visitorsGet, .visitorsPass, .adminHistoryCSV: .users(readers)
        case .visitorsCreate, .visitorsAdminMe, .visitorsCancel, .visitorsApprove, .visitorsReject,
             .visitorsDeviceRegister, .visitorsDeviceUnregister, .checkpointsCreate: .users(managers)
        case .approverMe, .approverList, .approverGet, .approverApprove, .approverReject,
             .approverDeviceRegister, .approverDeviceUnregister: .users([.approver])
        case .checkpointsList, .notificationsList: .users(allUsers)
        // PLATFORM_ADMIN makes no mutations through the API.
        case .notificationsRead, .notificationsDelete: .users([.owner, .admin, .approver])
        case .adminPushTest, .adminPushDeliveries: .users(managers)
        case .eventsStream: .scannerAnd(allUsers)
        case .scannerToken: .scannerIssuers
        case .scannerStats: .scannerAnd(managers)
        case .scannerHistory: .scannerAnd(readers)
        case .scannerCheckIn, .scannerCheckOut, .scannerLookup, .scannerWalkIn, .scannerOnSite,
             .scannerExpected: .scannerAnd([])
        }
    }

    public static func access(_ principal: PrincipalKind, to route: APIRoute) -> Access {
        let rule = rule(for: route)
        if case .anyone = rule { return .allowed }
        switch principal {
        case .anonymous:
            return .unauthenticated
        case .scanner:
            if case .scannerAnd = rule { return .allowed }
            return .forbidden
        case .user(let role, _):
            switch rule {
            case .anyone: return .allowed
            case .users(let roles), .scannerAnd(let roles): return roles.contains(role) ? .allowed : .forbidden
            case .scannerIssuers: return principal.mayScan ? .allowed : .forbidden
            }
        }
    }

    /// The routes a principal may call: the `flags` of `/api/visitors/admin-me`.
    public static func allowedRoutes(for principal: PrincipalKind) -> [APIRoute] {
        APIRoute.allCases.filter { access(principal, to: $0) == .allowed }
    }
}
