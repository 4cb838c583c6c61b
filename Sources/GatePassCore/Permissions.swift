/// What a caller asks Gate Pass to do. Permissions are decided on these, never on routes:
/// the API module maps each endpoint to the one action it performs.
public enum Action: String, Sendable, CaseIterable {
    // Login
    case requestLoginCode, logIn, peekLoginCode, readOwnProfile, logOut
    // A site's visitors, as its managers see them
    case listVisitors, registerVisitor, readManagerProfile, readVisitor, cancelVisitor, decideVisitor, renderPass
    case editVisitor, inviteVisitor, checkOutVisitor, openPassPage
    case registerManagerDevice, unregisterManagerDevice
    // The approvals queue
    case readApproverProfile, listApprovalQueue, readQueuedVisitor, decideQueuedVisitor
    case registerApproverDevice, unregisterApproverDevice
    // The gate
    case issueScannerToken, readGateStats, readScanHistory, checkIn, checkOut, lookUpVisitor, registerWalkIn
    case listOnSite, listExpectedPasses, listPassKeys
    // The site
    case exportScanHistory, listCheckpoints, createCheckpoint
    case readOrganization, updateOrganization, listUsers, createUser, updateUser, readMailLog, sendTestMail
    case followEvents, issueEventTicket, listNotifications, markNotificationRead, deleteNotification
    case sendTestPush, listPushDeliveries
    // Site governance
    case listBlocklist, addBlocklistEntry, removeBlocklistEntry
    // governance
    case updateCheckpoint, listScannerTokens, revokeScannerToken, createKioskEnrolment, enrolKiosk
    case readAuditLog, exportAuditLog, runRetention, eraseVisitor, exportVisitor
    // Operations
    case checkHealth, readMetrics
}

/// The answer of the permission table for one principal and one action.
public enum Access: Sendable, Equatable {
    case allowed
    /// No credential, or one that is not valid.
    case unauthenticated
    /// A valid credential of the wrong kind or role.
    case forbidden
}

/// The permission table (action × principal): the single place that says who may do what.
/// The server consults it before any handler runs, and tests walk all of it.
public enum Permissions {
    private enum Rule {
        case anyone
        case users(Set<Role>)
        case scannerAnd(Set<Role>)
        case scannerIssuers
    }

    private static let managers: Set<Role> = [.owner, .admin]
    private static let readers: Set<Role> = [.owner, .admin, .platformAdmin]
    /// A HOST reaches these too, for the visitors it registered or hosts (the handlers narrow it).
    private static let managersAndHosts: Set<Role> = [.owner, .admin, .host]
    private static let readersAndHosts: Set<Role> = [.owner, .admin, .platformAdmin, .host]
    private static let allUsers = Set(Role.allCases)

    private static func rule(for action: Action) -> Rule {
        switch action {
        // The pass page's token is its own credential (checked by the handler).
        // An enrolment code is its own credential (checked by the handler).
        case .requestLoginCode, .logIn, .peekLoginCode, .checkHealth, .readMetrics, .openPassPage, .enrolKiosk: .anyone
        case .readOwnProfile, .logOut: .users(allUsers)
        case .listVisitors, .readVisitor, .renderPass: .users(readersAndHosts)
        case .exportScanHistory: .users(readers)
        case .registerVisitor, .readManagerProfile, .cancelVisitor, .editVisitor, .inviteVisitor: .users(managersAndHosts)
        case .decideVisitor, .registerManagerDevice, .unregisterManagerDevice, .createCheckpoint,
             .checkOutVisitor, .readMailLog, .sendTestMail, .createUser, .updateUser: .users(managers)
        case .updateOrganization: .users([.owner])
        // Choosing an approver; PLATFORM_ADMIN with ?organizationId= (api.md "Users").
        case .listUsers: .users(readers)
        case .readOrganization: .users(allUsers)
        case .readApproverProfile, .listApprovalQueue, .readQueuedVisitor, .decideQueuedVisitor,
             .registerApproverDevice, .unregisterApproverDevice: .users([.approver])
        case .listCheckpoints, .listNotifications: .users(allUsers)
        // PLATFORM_ADMIN makes no mutations.
        case .markNotificationRead, .deleteNotification: .users([.owner, .admin, .approver, .host])
        case .sendTestPush, .listPushDeliveries: .users(managers)
        // The reasons are for the site's managers only (api.md "Blocklist").
        case .listBlocklist, .addBlocklistEntry, .removeBlocklistEntry: .users(managers)
        case .updateCheckpoint, .listScannerTokens, .revokeScannerToken, .createKioskEnrolment, .runRetention,
             .exportVisitor: .users(managers)
        // The audit log is read like the scan history: PLATFORM_ADMIN too, read only.
        case .readAuditLog, .exportAuditLog: .users(readers)
        // A data-subject erase is the owner's decision alone (api.md).
        case .eraseVisitor: .users([.owner])
        case .followEvents, .issueEventTicket, .listPassKeys: .scannerAnd(allUsers)
        case .issueScannerToken: .scannerIssuers
        case .readGateStats: .scannerAnd(managers)
        case .readScanHistory: .scannerAnd(readers)
        case .checkIn, .checkOut, .lookUpVisitor, .registerWalkIn, .listOnSite, .listExpectedPasses: .scannerAnd([])
        }
    }

    /// Whether `principal` may perform `action`.
    public static func may(_ principal: PrincipalKind, _ action: Action) -> Access {
        let rule = rule(for: action)
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

    /// The actions a principal may perform.
    public static func allowedActions(for principal: PrincipalKind) -> [Action] {
        Action.allCases.filter { may(principal, $0) == .allowed }
    }
}
