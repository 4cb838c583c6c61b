import GatePassAPI
import GatePassCore
import Testing
@testable import GatePassServer

/// The permission table (route × principal), written out by hand from api.md "Roles and
/// principals", the endpoint tables and "Precise rules". It is not derived from the code.
@Suite("Permissions")
struct PermissionsTests {
    /// The endpoints the server serves (its controllers' tables).
    static let servedEndpoints = GatePassApplication.routes.map(\.endpoint)

    /// The served endpoints a principal may call.
    static func allowedEndpoints(for principal: PrincipalKind) -> [Endpoint] {
        servedEndpoints.filter { Permissions.may(principal, $0.action) == .allowed }
    }

    /// The principals, in the column order of `table`.
    enum Principal: String, Sendable, CaseIterable {
        case anonymous, owner, admin, approver, scanningApprover, platformAdmin, scanner, host

        var kind: PrincipalKind {
            switch self {
            case .anonymous: .anonymous
            case .owner: .user(.owner, canScanCheckpoint: false)
            case .admin: .user(.admin, canScanCheckpoint: false)
            case .approver: .user(.approver, canScanCheckpoint: false)
            case .scanningApprover: .user(.approver, canScanCheckpoint: true)
            case .platformAdmin: .user(.platformAdmin, canScanCheckpoint: false)
            case .scanner: .scanner
            case .host: .user(.host, canScanCheckpoint: true)
            }
        }
    }

    /// `A` allowed, `U` unauthenticated (401), `F` forbidden (403), one letter per principal:
    ///
    /// A HOST reaches the visitor routes of api.md's "Visitors" section that create, edit,
    /// cancel, invite and read (the handlers narrow them to its own visitors), never decisions,
    /// check-out, the gate or the site's administration. Its row is given `canScanCheckpoint`
    /// true: the flag gives a HOST nothing.
    ///
    ///                                          anon OWNER ADMIN APPR APPR+scan PLATFORM scanner HOST
    static let table: [(Endpoint, String)] = [
        // public
        (.authSendOTP,               "A A A A A A A A"),
        (.authVerifyOTP,             "A A A A A A A A"),
        (.authDevPeekOTP,            "A A A A A A A A"),
        (.healthz,                   "A A A A A A A A"),
        (.metrics,                   "A A A A A A A A"),
        (.passPage,                  "A A A A A A A A"),
        // a kiosk's one-time enrolment code is its credential
        (.scannerEnrol,              "A A A A A A A A"),
        // any user, not a scanner token
        (.authMe,                    "U A A A A A F A"),
        (.authLogout,                "U A A A A A F A"),
        (.checkpointsList,           "U A A A A A F A"),
        (.organizationGet,           "U A A A A A F A"),
        // visitors: read by OWNER, ADMIN, PLATFORM_ADMIN (and a HOST, its own)
        (.visitorsList,              "U A A F F A F A"),
        (.visitorsGet,               "U A A F F A F A"),
        (.visitorsPass,              "U A A F F A F A"),
        (.visitorsPassPNG,           "U A A F F A F A"),
        (.usersList,                 "U A A F F A F F"),
        // users: OWNER and ADMIN (who may create or change whom is UserRules'); the settings: OWNER
        (.usersCreate,               "U A A F F F F F"),
        (.usersUpdate,               "U A A F F F F F"),
        (.organizationUpdate,        "U A F F F F F F"),
        (.adminHistoryCSV,           "U A A F F A F F"),
        // visitors: OWNER, ADMIN (and a HOST where its letter says so)
        (.visitorsCreate,            "U A A F F F F A"),
        (.visitorsAdminMe,           "U A A F F F F A"),
        (.visitorsCancel,            "U A A F F F F A"),
        (.visitorsApprove,           "U A A F F F F F"),
        (.visitorsReject,            "U A A F F F F F"),
        (.visitorsDeviceRegister,    "U A A F F F F F"),
        (.visitorsDeviceUnregister,  "U A A F F F F F"),
        (.checkpointsCreate,         "U A A F F F F F"),
        (.visitorsUpdate,            "U A A F F F F A"),
        (.visitorsInvite,            "U A A F F F F A"),
        (.visitorsCheckOut,          "U A A F F F F F"),
        (.adminMailList,             "U A A F F F F F"),
        (.adminMailTest,             "U A A F F F F F"),
        // approver
        (.approverMe,                "U F F A A F F F"),
        (.approverList,              "U F F A A F F F"),
        (.approverGet,               "U F F A A F F F"),
        (.approverApprove,           "U F F A A F F F"),
        (.approverReject,            "U F F A A F F F"),
        (.approverDeviceRegister,    "U F F A A F F F"),
        (.approverDeviceUnregister,  "U F F A A F F F"),
        // scanner token issue: OWNER, ADMIN, APPROVER with canScanCheckpoint (user token only)
        (.scannerToken,              "U A A F A F F F"),
        // scanner token, or OWNER/ADMIN (stats) and OWNER/ADMIN/PLATFORM_ADMIN (history)
        (.scannerStats,              "U A A F F F A F"),
        (.scannerHistory,            "U A A F F A A F"),
        // scanner token only
        (.scannerCheckIn,            "U F F F F F A F"),
        (.scannerCheckOut,           "U F F F F F A F"),
        (.scannerLookup,             "U F F F F F A F"),
        (.scannerWalkIn,             "U F F F F F A F"),
        (.scannerOnSite,             "U F F F F F A F"),
        (.scannerExpected,           "U F F F F F A F"),
        (.scannerPassKeys,           "U A A A A A A A"),
        // events: any token (PLATFORM_ADMIN gets an empty stream); notifications: any user,
        // but PLATFORM_ADMIN makes no mutations
        (.eventsStream,              "U A A A A A A A"),
        (.eventsTicket,              "U A A A A A A A"),
        (.notificationsList,         "U A A A A A F A"),
        (.notificationsRead,         "U A A A A F F A"),
        (.notificationsDelete,       "U A A A A F F A"),
        // push-test and the delivery log (not in api.md): OWNER, ADMIN
        (.adminPushTest,             "U A A F F F F F"),
        (.adminPushDeliveries,       "U A A F F F F F"),
        // the blocklist: OWNER, ADMIN (the reasons are theirs alone)
        (.blocklistList,             "U A A F F F F F"),
        (.blocklistAdd,              "U A A F F F F F"),
        (.blocklistRemove,           "U A A F F F F F"),
        // retention and data-subject requests: a run and an export OWNER/ADMIN, an erase OWNER alone
        (.adminRetentionRun,         "U A A F F F F F"),
        (.adminVisitorErase,         "U A F F F F F F"),
        (.adminVisitorExport,        "U A A F F F F F"),
        // the gates: OWNER, ADMIN
        (.checkpointsUpdate,         "U A A F F F F F"),
        (.adminScannerTokens,        "U A A F F F F F"),
        (.adminScannerTokenRevoke,   "U A A F F F F F"),
        (.adminKiosksCreate,         "U A A F F F F F"),
        // the audit log: read like the scan history (PLATFORM_ADMIN too, read only)
        (.adminAudit,                "U A A F F A F F"),
        (.adminAuditCSV,             "U A A F F A F F"),
    ]

    static func expected(for route: Endpoint) -> [Principal: Access]? {
        guard let row = table.first(where: { $0.0 == route })?.1 else { return nil }
        let letters = row.split(separator: " ")
        guard letters.count == Principal.allCases.count else { return nil }
        var answer: [Principal: Access] = [:]
        for (principal, letter) in zip(Principal.allCases, letters) {
            switch letter {
            case "A": answer[principal] = .allowed
            case "U": answer[principal] = .unauthenticated
            case "F": answer[principal] = .forbidden
            default: return nil
            }
        }
        return answer
    }

    @Test func tableHasExactlyOneWellFormedRowPerRoute() {
        let routes = Self.table.map(\.0)
        #expect(routes.count == Set(routes).count, "no route twice")
        #expect(Set(routes) == Set(Self.servedEndpoints), "every route of the code is in the table and vice versa")
        for route in routes { #expect(Self.expected(for: route) != nil, "\(route.name): malformed row") }
    }

    @Test("Route × principal", arguments: Self.servedEndpoints, Principal.allCases)
    func access(route: Endpoint, principal: Principal) throws {
        let row = try #require(Self.expected(for: route))
        #expect(Permissions.may(principal.kind, route.action) == row[principal])
    }

    // MARK: - Derived properties, stated in api.md's words

    /// The pass page is public too: its unguessable token is the credential (api.md "Site operations").
    /// So is a kiosk's enrolment: the one-time code is the credential.
    static let publicRoutes: Set<Endpoint> = [.authSendOTP, .authVerifyOTP, .authDevPeekOTP, .healthz, .metrics, .passPage,
                                              .scannerEnrol]

    @Test(arguments: Self.servedEndpoints)
    func anonymousIsOnlyAllowedOnPublicRoutesAndOtherwiseUnauthenticated(route: Endpoint) {
        let expected: Access = Self.publicRoutes.contains(route) ? .allowed : .unauthenticated
        #expect(Permissions.may(.anonymous, route.action) == expected)
    }

    @Test(arguments: Self.servedEndpoints)
    func scannerTokenReachesOnlyScannerRoutesOtherThanTokenIssue(route: Endpoint) {
        let scannerRoute = (route.pathPattern.hasPrefix("/api/visitor-scanner/") && route != .scannerToken)
            || route == .eventsStream || route == .eventsTicket
        let expected: Access = Self.publicRoutes.contains(route) || scannerRoute ? .allowed : .forbidden
        #expect(Permissions.may(.scanner, route.action) == expected)
    }

    @Test(arguments: Self.servedEndpoints, [Role.owner, .admin, .platformAdmin, .host])
    func canScanCheckpointMattersOnlyForApprovers(route: Endpoint, role: Role) {
        #expect(Permissions.may(.user(role, canScanCheckpoint: true), route.action)
                == Permissions.may(.user(role, canScanCheckpoint: false), route.action))
    }

    @Test func platformAdminMutatesNothing() {
        let platformAdmin = PrincipalKind.user(.platformAdmin, canScanCheckpoint: true)
        let allowedPosts = Self.allowedEndpoints(for: platformAdmin).filter { $0.method == .post }
        // Only the login flow, logout and an event ticket (signed, not stored: it changes
        // nothing), and a kiosk's enrolment (public: the code is the credential, the token is not
        // looked at); no visitor, approver, scanner or checkpoint mutation.
        #expect(Set(allowedPosts) == [.authSendOTP, .authVerifyOTP, .authLogout, .eventsTicket, .scannerEnrol])
    }

    @Test func mayScan() {
        #expect(PrincipalKind.user(.owner, canScanCheckpoint: false).mayScan)
        #expect(PrincipalKind.user(.admin, canScanCheckpoint: false).mayScan)
        #expect(PrincipalKind.user(.approver, canScanCheckpoint: true).mayScan)
        #expect(!PrincipalKind.user(.approver, canScanCheckpoint: false).mayScan)
        #expect(!PrincipalKind.user(.platformAdmin, canScanCheckpoint: true).mayScan)
        #expect(!PrincipalKind.user(.host, canScanCheckpoint: true).mayScan)
        #expect(!PrincipalKind.anonymous.mayScan)
        #expect(!PrincipalKind.scanner.mayScan)
    }

    @Test(arguments: Principal.allCases)
    func allowedRoutesAreTheAllowedCellsOfTheTable(principal: Principal) {
        let expected = Set(Self.table.compactMap { route, _ in
            Self.expected(for: route)?[principal] == .allowed ? route : nil
        })
        #expect(Set(Self.allowedEndpoints(for: principal.kind)) == expected)
    }

    // MARK: - Routes and roles as api.md names them

    @Test(arguments: Self.servedEndpoints)
    func routeNamesAreMethodSpacePath(route: Endpoint) {
        #expect(route.name == "\(route.method.rawValue) \(route.pathPattern)")
        #expect(route.pathPattern.hasPrefix("/api/") || route.pathPattern == "/metrics" || route == .passPage)
        #expect(!route.pathPattern.contains(" "))
    }

    @Test func routeMethodAndPathSplit() {
        #expect(Endpoint.scannerLookup.method == .get)
        #expect(Endpoint.scannerLookup.pathPattern == "/api/visitor-scanner/lookup/:query")
        #expect(Endpoint.visitorsApprove.method == .post)
        #expect(Endpoint.visitorsApprove.pathPattern == "/api/visitors/:id/approve-scan")
        #expect(Endpoint.metrics.pathPattern == "/metrics")
    }

    @Test(arguments: Action.allCases)
    func everyActionHasARuleAndIsPerformedByAServedEndpoint(action: Action) {
        // `Permissions.may` switches over every action (the compiler holds that); here no
        // action is left without an endpoint that performs it.
        #expect(Self.servedEndpoints.contains { $0.action == action }, "\(action) is performed by no endpoint")
    }

    @Test func rolesUseTheNamesOfApiMd() {
        #expect(Role.allCases.map(\.rawValue) == ["OWNER", "ADMIN", "APPROVER", "PLATFORM_ADMIN", "HOST"])
        #expect(Role.allCases.map(\.profileKey) == ["owner", "admin", "approver", "platformAdmin", "host"])
        #expect(Role.allCases.filter(\.managesOrganization) == [.owner, .admin])
    }
}
