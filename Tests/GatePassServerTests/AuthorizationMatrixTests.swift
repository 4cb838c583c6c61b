import Foundation
import GatePassAPI
import GatePassCore
import LoopbackHTTP
import Testing
@testable import GatePassServer

/// Who calls a route in the matrix.
enum Caller: String, CaseIterable, CustomStringConvertible, Sendable {
    case owner, admin, approverScan, approver, platformAdmin, scanner, noToken, garbageToken
    /// Users of a second organization acting on the first organization's ids.
    case otherOwner, otherApprover, otherScanner
    /// A HOST of the first organization: the cells' visitors were registered by another user
    /// for no host, so they are not its own (404), while its list and its own creations work.
    case host

    var description: String { rawValue }
}

/// Every route of `Endpoint` × every caller, over real HTTP.
///
/// The expected table is written out from api.md (roles table, endpoint sections, "Precise
/// rules"): 401 without a token or with a garbage one, 403 for a valid credential of the wrong
/// role or kind, 404 (never 403) for another organization's ids, and the route's success
/// status when allowed. Each cell acts on a fresh visitor of the first organization
/// (EXPECTED, requiresApproval, unassigned, valid today), so every allowed call succeeds.
@Suite struct AuthorizationMatrixTests {
    static let servedEndpoints = GatePassApplication.routes.map(\.endpoint)

    //                                  OWNER ADMIN APPR+ APPR  PLATF SCAN  none  garb  oOWN  oAPPR oSCAN HOST
    static let table: [Endpoint: [Int]] = [
        .authSendOTP:                   [202,  202,  202,  202,  202,  202,  202,  401,  202,  202,  202,  202],
        .authVerifyOTP:                 [200,  200,  200,  200,  200,  200,  200,  401,  200,  200,  200,  200],
        .authDevPeekOTP:                [200,  200,  200,  200,  200,  200,  200,  401,  200,  200,  200,  200],
        .authMe:                        [200,  200,  200,  200,  200,  403,  401,  401,  200,  200,  403,  200],
        .authLogout:                    [204,  204,  204,  204,  204,  403,  401,  401,  204,  204,  403,  204],

        .visitorsList:                  [200,  200,  403,  403,  200,  403,  401,  401,  200,  403,  403,  200],
        .visitorsCreate:                [201,  201,  403,  403,  403,  403,  401,  401,  201,  403,  403,  201],
        .visitorsAdminMe:               [200,  200,  403,  403,  403,  403,  401,  401,  200,  403,  403,  200],
        .visitorsGet:                   [200,  200,  403,  403,  200,  403,  401,  401,  404,  403,  403,  404],
        .visitorsCancel:                [200,  200,  403,  403,  403,  403,  401,  401,  404,  403,  403,  404],
        .visitorsApprove:               [200,  200,  403,  403,  403,  403,  401,  401,  404,  403,  403,  403],
        .visitorsReject:                [200,  200,  403,  403,  403,  403,  401,  401,  404,  403,  403,  403],
        .visitorsPass:                  [200,  200,  403,  403,  200,  403,  401,  401,  404,  403,  403,  404],
        .visitorsPassPNG:               [200,  200,  403,  403,  200,  403,  401,  401,  404,  403,  403,  404],
        .visitorsUpdate:                [200,  200,  403,  403,  403,  403,  401,  401,  404,  403,  403,  404],
        .visitorsInvite:                [202,  202,  403,  403,  403,  403,  401,  401,  404,  403,  403,  404],
        // The cell's visitor was checked in by the first organization's gate.
        .visitorsCheckOut:              [200,  200,  403,  403,  403,  403,  401,  401,  404,  403,  403,  403],
        // The pass page's token is its credential: a bearer token is not even looked at.
        .passPage:                      [200,  200,  200,  200,  200,  200,  200,  200,  200,  200,  200,  200],
        .organizationGet:               [200,  200,  200,  200,  200,  403,  401,  401,  200,  200,  403,  200],
        .usersList:                     [200,  200,  403,  403,  200,  403,  401,  401,  200,  403,  403,  403],
        // Another organization's owner creates in, and changes, its own organization: the
        // cell's user is the first organization's, so changing it is 404.
        .usersCreate:                   [201,  201,  403,  403,  403,  403,  401,  401,  201,  403,  403,  403],
        .usersUpdate:                   [200,  200,  403,  403,  403,  403,  401,  401,  404,  403,  403,  403],
        .organizationUpdate:            [200,  403,  403,  403,  403,  403,  401,  401,  200,  403,  403,  403],
        .adminMailList:                 [200,  200,  403,  403,  403,  403,  401,  401,  200,  403,  403,  403],
        .adminMailTest:                 [202,  202,  403,  403,  403,  403,  401,  401,  202,  403,  403,  403],
        .visitorsDeviceRegister:        [200,  200,  403,  403,  403,  403,  401,  401,  200,  403,  403,  403],
        .visitorsDeviceUnregister:      [204,  204,  403,  403,  403,  403,  401,  401,  204,  403,  403,  403],

        .approverMe:                    [403,  403,  200,  200,  403,  403,  401,  401,  403,  200,  403,  403],
        .approverList:                  [403,  403,  200,  200,  403,  403,  401,  401,  403,  200,  403,  403],
        .approverGet:                   [403,  403,  200,  200,  403,  403,  401,  401,  403,  404,  403,  403],
        .approverApprove:               [403,  403,  200,  200,  403,  403,  401,  401,  403,  404,  403,  403],
        .approverReject:                [403,  403,  200,  200,  403,  403,  401,  401,  403,  404,  403,  403],
        .approverDeviceRegister:        [403,  403,  200,  200,  403,  403,  401,  401,  403,  200,  403,  403],
        .approverDeviceUnregister:      [403,  403,  204,  204,  403,  403,  401,  401,  403,  204,  403,  403],

        // The body names the first organization's "Main gate": another organization's user gets 404.
        .scannerToken:                  [201,  201,  201,  403,  403,  403,  401,  401,  404,  403,  403,  403],
        .scannerStats:                  [200,  200,  403,  403,  403,  200,  401,  401,  200,  403,  200,  403],
        .scannerHistory:                [200,  200,  403,  403,  200,  200,  401,  401,  200,  403,  200,  403],
        .scannerCheckIn:                [403,  403,  403,  403,  403,  200,  401,  401,  403,  403,  404,  403],
        .scannerCheckOut:               [403,  403,  403,  403,  403,  200,  401,  401,  403,  403,  404,  403],
        .scannerLookup:                 [403,  403,  403,  403,  403,  200,  401,  401,  403,  403,  200,  403],
        .scannerWalkIn:                 [403,  403,  403,  403,  403,  201,  401,  401,  403,  403,  201,  403],
        .scannerOnSite:                 [403,  403,  403,  403,  403,  200,  401,  401,  403,  403,  200,  403],
        .scannerExpected:               [403,  403,  403,  403,  403,  200,  401,  401,  403,  403,  200,  403],
        // Public halves only: any user or gate of the organization may check a pass offline.
        .scannerPassKeys:               [200,  200,  200,  200,  200,  200,  401,  401,  200,  200,  200,  200],

        .adminHistoryCSV:               [200,  200,  403,  403,  200,  403,  401,  401,  200,  403,  403,  403],
        .checkpointsList:               [200,  200,  200,  200,  200,  403,  401,  401,  200,  200,  403,  200],
        .checkpointsCreate:             [201,  201,  403,  403,  403,  403,  401,  401,  201,  403,  403,  403],

        // The stream's status line and headers only (the body never ends); PLATFORM_ADMIN gets an empty stream.
        .eventsStream:                  [200,  200,  200,  200,  200,  200,  401,  401,  200,  200,  200,  200],
        // Any token: the ticket opens that token's own stream.
        .eventsTicket:                  [201,  201,  201,  201,  201,  201,  401,  401,  201,  201,  201,  201],
        .notificationsList:             [200,  200,  200,  200,  200,  403,  401,  401,  200,  200,  403,  200],
        // The cell's notification is the first organization's walk-in: another organization gets 404.
        .notificationsRead:             [200,  200,  200,  200,  403,  403,  401,  401,  404,  404,  403,  404],
        .notificationsDelete:           [204,  204,  204,  204,  403,  403,  401,  401,  404,  404,  403,  404],
        .adminPushTest:                 [200,  200,  403,  403,  403,  403,  401,  401,  200,  403,  403,  403],
        .adminPushDeliveries:           [200,  200,  403,  403,  403,  403,  401,  401,  200,  403,  403,  403],
        // The cell's entry is the first organization's: another organization's owner gets 404.
        .blocklistList:                 [200,  200,  403,  403,  403,  403,  401,  401,  200,  403,  403,  403],
        .blocklistAdd:                  [201,  201,  403,  403,  403,  403,  401,  401,  201,  403,  403,  403],
        .blocklistRemove:               [204,  204,  403,  403,  403,  403,  401,  401,  404,  403,  403,  403],
        // The other organization's owner runs retention on its own organization; the cell's
        // visitor is the first organization's, so erasing or exporting it is 404.
        .adminRetentionRun:             [200,  200,  403,  403,  403,  403,  401,  401,  200,  403,  403,  403],
        .adminVisitorErase:             [200,  403,  403,  403,  403,  403,  401,  401,  404,  403,  403,  403],
        .adminVisitorExport:            [200,  200,  403,  403,  403,  403,  401,  401,  404,  403,  403,  403],
        // The cell's checkpoint and scanner token are the first organization's: another's owner gets 404.
        .checkpointsUpdate:             [200,  200,  403,  403,  403,  403,  401,  401,  404,  403,  403,  403],
        .adminScannerTokens:            [200,  200,  403,  403,  403,  403,  401,  401,  200,  403,  403,  403],
        .adminScannerTokenRevoke:       [204,  204,  403,  403,  403,  403,  401,  401,  404,  403,  403,  403],
        .adminKiosksCreate:             [201,  201,  403,  403,  403,  403,  401,  401,  404,  403,  403,  403],
        // The code is the credential: any valid token is not looked at; a garbage one is 401 as everywhere.
        .scannerEnrol:                  [201,  201,  201,  201,  201,  201,  201,  401,  201,  201,  201,  201],

        .adminAudit:                    [200,  200,  403,  403,  200,  403,  401,  401,  200,  403,  403,  403],
        .adminAuditCSV:                 [200,  200,  403,  403,  200,  403,  401,  401,  200,  403,  403,  403],

        .healthz:                       [200,  200,  200,  200,  200,  200,  200,  401,  200,  200,  200,  200],
        // /metrics has its own credential (metricsToken, not configured here): user tokens are not looked at.
        .metrics:                       [200,  200,  200,  200,  200,  200,  200,  200,  200,  200,  200,  200],
    ]

    static func expected(_ route: Endpoint, _ caller: Caller) -> Int {
        table[route]![Caller.allCases.firstIndex(of: caller)!]
    }

    @Test func theTableCoversEveryRouteAndCaller() {
        #expect(Set(Self.table.keys) == Set(Self.servedEndpoints))
        for (route, row) in Self.table { #expect(row.count == Caller.allCases.count, "\(route)") }
    }

    /// The permission table of GatePassCore says the same as the table written from api.md.
    @Test func permissionTableAgrees() {
        let kinds: [Caller: PrincipalKind] = [
            .owner: .user(.owner, canScanCheckpoint: false), .admin: .user(.admin, canScanCheckpoint: false),
            .approverScan: .user(.approver, canScanCheckpoint: true), .approver: .user(.approver, canScanCheckpoint: false),
            .platformAdmin: .user(.platformAdmin, canScanCheckpoint: false), .scanner: .scanner, .noToken: .anonymous,
            .host: .user(.host, canScanCheckpoint: false),
        ]
        for route in Self.servedEndpoints {
            for (caller, kind) in kinds {
                let expected: Access = switch Self.expected(route, caller) {
                case 401: .unauthenticated
                case 403: .forbidden
                default: .allowed
                }
                #expect(Permissions.may(kind, route.action) == expected, "\(route) as \(caller)")
            }
        }
    }

    /// Everything a matrix run needs: two organizations, every caller's credential.
    struct World {
        let server: TestServer
        let site: Site
        let other: Site
        let platformToken: String
        /// A separate owner session that makes the cells' visitors (logouts in the matrix do not touch it).
        let setupToken: String
        let scanner: String
        let otherScanner: String
        let hostToken: String

        init(_ server: TestServer) throws {
            self.server = server
            site = try server.makeSite("Acme", domain: "acme.test")
            other = try server.makeSite("Globex", domain: "globex.test")
            try server.addUser("platform@gatepass.test", role: .platformAdmin, organization: "Platform")
            platformToken = try server.login("platform@gatepass.test")
            try server.addUser("setup@acme.test", role: .owner, organization: "Acme")
            setupToken = try server.login("setup@acme.test")
            scanner = try server.scannerToken(setupToken)
            try server.addUser("setup@globex.test", role: .owner, organization: "Globex")
            otherScanner = try server.scannerToken(try server.login("setup@globex.test"))
            try server.addUser("host@acme.test", role: .host, organization: "Acme")
            hostToken = try server.login("host@acme.test")
        }

        func token(_ caller: Caller) -> String? {
            switch caller {
            case .owner: site.ownerToken
            case .admin: site.adminToken
            case .approverScan: site.approverToken
            case .approver: site.deskToken
            case .platformAdmin: platformToken
            case .scanner: scanner
            case .noToken: nil
            case .garbageToken: "gp1.Z2FyYmFnZQ.bm90LWEtc2lnbmF0dXJl"
            case .otherOwner: other.ownerToken
            case .otherApprover: other.deskToken
            case .otherScanner: otherScanner
            case .host: hostToken
            }
        }
    }

    /// The request of one cell: method, path and body, after any preparation it needs.
    static func request(for route: Endpoint, cell: Int, world: World) throws -> (String, String, Any?) {
        let server = world.server
        let target = try server.createVisitor(world.setupToken, [
            "name": "Matrix Visitor \(cell)", "email": "matrix\(cell)@visitors.test", "requiresApproval": true,
        ])
        let id = target["id"] as! String
        let shortId = target["shortId"] as! String
        switch route {
        case .authSendOTP: return ("POST", "/api/auth/send-otp", ["email": "nobody\(cell)@acme.test"])
        case .authVerifyOTP:
            let email = "verify\(cell)@acme.test"
            try server.addUser(email, role: .approver, organization: "Acme")
            let code = try server.requestCode(email)
            return ("POST", "/api/auth/verify-otp", ["email": email, "otp": code])
        case .authDevPeekOTP:
            // A user's email: an email of no user has no code to peek at.
            let email = "peek\(cell)@acme.test"
            try server.addUser(email, role: .host, organization: "Acme")
            _ = try server.post("/api/auth/send-otp", ["email": email])
            return ("GET", "/api/auth/dev-peek-otp?email=\(email)", nil)
        case .authMe: return ("GET", "/api/auth/me", nil)
        case .authLogout: return ("POST", "/api/auth/logout", nil)
        case .visitorsList: return ("GET", "/api/visitors", nil)
        case .visitorsCreate: return ("POST", "/api/visitors", ["name": "Created \(cell)"])
        case .visitorsAdminMe: return ("GET", "/api/visitors/admin-me", nil)
        case .visitorsGet: return ("GET", "/api/visitors/\(id)", nil)
        case .visitorsCancel: return ("POST", "/api/visitors/\(id)/cancel", nil)
        case .visitorsApprove: return ("POST", "/api/visitors/\(id)/approve-scan", ["note": "ok"])
        case .visitorsReject: return ("POST", "/api/visitors/\(id)/reject-scan", ["note": "no"])
        case .visitorsPass: return ("GET", "/api/visitors/\(id)/pass.svg", nil)
        case .visitorsPassPNG: return ("GET", "/api/visitors/\(id)/pass.png", nil)
        // By short id, lower case: a path names a visitor by either (api.md).
        case .visitorsUpdate: return ("PATCH", "/api/visitors/\(shortId.lowercased())", ["purpose": "Edited \(cell)"])
        case .visitorsInvite: return ("POST", "/api/visitors/\(id)/invite", nil)
        case .visitorsCheckOut:
            _ = try server.post("/api/visitors/\(id)/approve-scan", token: world.setupToken, ["note": "ok"])
            #expect(try server.checkIn(world.scanner, shortId).string("result") == "CHECKED_IN")
            return ("POST", "/api/visitors/\(id)/checkout", nil)
        case .passPage:
            let invitation = try server.post("/api/visitors/\(id)/invite", token: world.setupToken)
            let url = try #require(invitation.string("passURL"))
            return ("GET", String(url[try #require(url.range(of: "/p/")).lowerBound...]), nil)
        case .organizationGet: return ("GET", "/api/organization", nil)
        case .usersList: return ("GET", "/api/users", nil)
        case .usersCreate:
            return ("POST", "/api/users", ["email": "created\(cell)@acme.test", "name": "Created \(cell)", "role": "HOST"])
        case .usersUpdate:
            let user = try server.addUser("changed\(cell)@acme.test", role: .approver, organization: "Acme")
            return ("PATCH", "/api/users/\(user.id)", ["name": "Renamed \(cell)"])
        case .organizationUpdate: return ("PATCH", "/api/organization", ["retentionDays": 30 + cell])
        case .adminMailList: return ("GET", "/api/admin/mail", nil)
        case .adminMailTest: return ("POST", "/api/admin/mail/test", ["to": "test\(cell)@acme.test"])
        case .visitorsDeviceRegister:
            return ("POST", "/api/visitors/devices/register", ["token": "device-\(cell)", "platform": "web"])
        case .visitorsDeviceUnregister: return ("POST", "/api/visitors/devices/unregister", ["token": "device-\(cell)"])
        case .approverMe: return ("GET", "/api/approver/me", nil)
        case .approverList: return ("GET", "/api/approver/visitors?status=AWAITING_APPROVAL", nil)
        case .approverGet: return ("GET", "/api/approver/visitors/\(id)", nil)
        case .approverApprove: return ("POST", "/api/approver/visitors/\(id)/approve", ["note": "ok"])
        case .approverReject: return ("POST", "/api/approver/visitors/\(id)/reject", [String: Any]())
        case .approverDeviceRegister:
            return ("POST", "/api/approver/devices/register", ["token": "device-\(cell)", "platform": "ios"])
        case .approverDeviceUnregister: return ("POST", "/api/approver/devices/unregister", ["token": "device-\(cell)"])
        case .scannerToken: return ("POST", "/api/visitor-scanner/token", ["checkpointId": world.site.mainGate])
        case .scannerStats: return ("GET", "/api/visitor-scanner/stats", nil)
        case .scannerHistory: return ("GET", "/api/visitor-scanner/scan-history", nil)
        case .scannerCheckIn: return ("POST", "/api/visitor-scanner/checkin", ["shortId": shortId])
        case .scannerCheckOut: return ("POST", "/api/visitor-scanner/checkout", ["shortId": shortId])
        case .scannerLookup: return ("GET", "/api/visitor-scanner/lookup/\(shortId)", nil)
        case .scannerWalkIn: return ("POST", "/api/visitor-scanner/walk-in-arrived", ["name": "Walk In \(cell)"])
        case .scannerOnSite: return ("GET", "/api/visitor-scanner/on-site", nil)
        case .scannerExpected: return ("GET", "/api/visitor-scanner/expected", nil)
        case .scannerPassKeys: return ("GET", "/api/visitor-scanner/pass-keys", nil)
        case .adminHistoryCSV: return ("GET", "/api/admin/scan-history.csv", nil)
        case .checkpointsList: return ("GET", "/api/checkpoints", nil)
        case .checkpointsCreate: return ("POST", "/api/checkpoints", ["name": "Gate \(cell)"])
        case .healthz: return ("GET", "/api/healthz", nil)
        case .metrics: return ("GET", "/metrics", nil)
        case .eventsStream: return ("GET", "/api/events", nil)
        case .eventsTicket: return ("POST", "/api/events/ticket", [String: Any]())
        case .notificationsList: return ("GET", "/api/notifications", nil)
        case .notificationsRead: return ("POST", "/api/notifications/\(try newNotification())/read", nil)
        case .notificationsDelete: return ("DELETE", "/api/notifications/\(try newNotification())", nil)
        case .adminPushTest: return ("POST", "/api/admin/push-test", ["waitSeconds": 0])
        case .adminPushDeliveries: return ("GET", "/api/admin/push-deliveries?token=device-\(cell)", nil)
        case .blocklistList: return ("GET", "/api/blocklist", nil)
        case .adminAudit: return ("GET", "/api/admin/audit", nil)
        case .adminAuditCSV: return ("GET", "/api/admin/audit.csv", nil)
        case .blocklistAdd: return ("POST", "/api/blocklist", ["name": "Blocked Person \(cell)", "reason": "matrix"])
        case .adminRetentionRun: return ("POST", "/api/admin/retention/run", ["dryRun": cell % 2 == 0])
        case .adminVisitorErase: return ("POST", "/api/admin/visitors/\(id)/erase", nil)
        case .adminVisitorExport: return ("GET", "/api/admin/visitors/\(shortId.lowercased())/export", nil)
        case .blocklistRemove:
            let entry = try server.block(world.setupToken, ["email": "blocked\(cell)@visitors.test"])
            return ("DELETE", "/api/blocklist/\(try #require(entry["id"] as? String))", nil)
        case .checkpointsUpdate:
            let checkpoint = try server.addCheckpoint("Matrix gate \(cell)", token: world.setupToken)
            return ("PATCH", "/api/checkpoints/\(checkpoint)", ["name": "Matrix gate \(cell) renamed"])
        case .adminScannerTokens: return ("GET", "/api/admin/scanner-tokens", nil)
        case .adminScannerTokenRevoke:
            _ = try server.scannerToken(world.setupToken)
            let newest = try #require(try server.scannerTokens(world.setupToken).first?["id"] as? String)
            return ("POST", "/api/admin/scanner-tokens/\(newest)/revoke", nil)
        case .adminKiosksCreate:
            return ("POST", "/api/admin/kiosks", ["checkpointId": world.site.mainGate, "name": "Matrix kiosk \(cell)"])
        case .scannerEnrol:
            return ("POST", "/api/visitor-scanner/enrol",
                    ["enrolmentCode": try server.enrolmentCode(world.site.mainGate, token: world.setupToken)])
        default: Issue.record("\(route) has no request in the matrix"); return ("GET", "/", nil)
        }
        /// A walk-in at the first organization's gate: unassigned, so every user of that
        /// organization has it in their list. Its id is the newest of the setup owner's list.
        func newNotification() throws -> String {
            _ = try server.client().send("POST", "/api/visitor-scanner/walk-in-arrived", token: world.scanner,
                                         json: ["name": "Walk In \(cell)"])
            let list = try server.get("/api/notifications?limit=1", token: world.setupToken)
            return try #require(list.items.first?["id"] as? String)
        }
    }

    /// On both backends: every route's SQL runs on SQLite and on PostgreSQL.
    @Test(arguments: Backend.available, Self.servedEndpoints)
    func everyCallerOnRoute(_ backend: Backend, _ route: Endpoint) throws {
        try withServer(on: backend) { server in
            let world = try World(server)
            for (cell, caller) in Caller.allCases.enumerated() {
                let (method, path, body) = try Self.request(for: route, cell: cell, world: world)
                #expect(method == route.method.rawValue)
                var headers: [String: String] = [:]
                if let token = world.token(caller) { headers["Authorization"] = "Bearer \(token)" }
                var bytes: [UInt8]?
                if let body {
                    headers["Content-Type"] = "application/json"
                    bytes = Array(try JSONSerialization.data(withJSONObject: body))
                }
                // The event stream never ends: only its status line and headers are read.
                let answer = route == .eventsStream
                    ? try SSETestClient(port: server.port, headers: headers).answer
                    : try server.client().send(method, path, headers: headers, body: bytes)
                let expected = Self.expected(route, caller)
                #expect(answer.status == expected, "\(route.name) as \(caller): \(answer.status) \(answer.text)")
                switch expected {
                case 401: #expect(answer.isError(401, "UNAUTHORIZED"), "\(route.name) as \(caller): \(answer.text)")
                case 403: #expect(answer.isError(403, "FORBIDDEN"), "\(route.name) as \(caller): \(answer.text)")
                case 404: #expect(answer.isError(404, "NOT_FOUND"), "\(route.name) as \(caller): \(answer.text)")
                default: #expect(answer.error == nil, "\(route.name) as \(caller): \(answer.text)")
                }
                // Another organization's search finds nothing of the first organization.
                if route == .scannerLookup && caller == .otherScanner { #expect(answer.items.isEmpty) }
            }
        }
    }

    /// A visitor assigned to another approver does not exist for this approver (404, never 403),
    /// and does not show in its queue; an unassigned one and its own do.
    @Test func approverScopeIsOwnOrUnassigned() throws {
        try withSite { server, site in
            let theirs = try server.createVisitor(site.ownerToken, ["name": "Theirs", "requiresApproval": true,
                                                                    "approverId": site.desk.id])
            let mine = try server.createVisitor(site.ownerToken, ["name": "Mine", "requiresApproval": true,
                                                                  "approverId": site.approver.id])
            let unassigned = try server.createVisitor(site.ownerToken, ["name": "Anyone's", "requiresApproval": true])
            for visitor in [theirs, mine, unassigned] {
                #expect(try server.checkIn(site.scanner, visitor["shortId"] as! String,
                                           ["confirmApprovalRequest": true]).string("result") == "AWAITING_APPROVAL")
            }
            let id = theirs["id"] as! String
            for (method, path) in [("GET", "/api/approver/visitors/\(id)"), ("POST", "/api/approver/visitors/\(id)/approve"),
                                   ("POST", "/api/approver/visitors/\(id)/reject")] {
                let answer = method == "GET" ? try server.get(path, token: site.approverToken)
                                             : try server.post(path, token: site.approverToken, ["note": "x"])
                #expect(answer.isError(404, "NOT_FOUND"), "\(method) \(path): \(answer.text)")
            }
            #expect(try server.visitor(id, site.ownerToken)["status"] as? String == "AWAITING_APPROVAL")
            let queue = try server.get("/api/approver/visitors", token: site.approverToken)
            #expect(Set(ids(queue.items)) == [mine["id"] as! String, unassigned["id"] as! String])
            let deskQueue = try server.get("/api/approver/visitors", token: site.deskToken)
            #expect(Set(ids(deskQueue.items)) == [id, unassigned["id"] as! String])
            #expect(try server.get("/api/approver/visitors/\(id)", token: site.deskToken).status == 200)
            #expect(try server.post("/api/approver/visitors/\(mine["id"] as! String)/approve", token: site.approverToken).status == 200)
        }
    }

    /// Another organization sees none of the first organization's data in any list or count.
    @Test func anotherOrganizationSeesNothing() throws {
        try withServer { server in
            let site = try server.makeSite("Acme", domain: "acme.test")
            let other = try server.makeSite("Globex", domain: "globex.test")
            let visitor = try server.createVisitor(site.ownerToken, ["name": "Secret Person", "email": "secret@x.test"])
            let waiting = try server.createVisitor(site.ownerToken, ["name": "Secret Waiting", "requiresApproval": true])
            let shortId = visitor["shortId"] as! String
            #expect(try server.checkIn(site.scanner, shortId).string("result") == "CHECKED_IN")
            #expect(try server.checkIn(site.scanner, waiting["shortId"] as! String,
                                       ["confirmApprovalRequest": true]).string("result") == "AWAITING_APPROVAL")
            // Their scanner cannot check the pass in or out: 404, written to their own history as NOT_FOUND.
            #expect(try server.checkIn(other.scanner, shortId).isError(404, "NOT_FOUND"))
            #expect(try server.checkOut(other.scanner, shortId).isError(404, "NOT_FOUND"))
            #expect(try server.visitor(visitor["id"], site.ownerToken)["status"] as? String == "CHECKED_IN")
            let theirHistory = try server.history(other.ownerToken)
            #expect(theirHistory.count == 1 && theirHistory.first?["result"] as? String == "NOT_FOUND")
            #expect(theirHistory.first?["visitorId"] is NSNull)

            let token = other.ownerToken
            #expect(try server.get("/api/visitors", token: token).items.isEmpty)
            #expect(try server.get("/api/visitors?q=secret", token: token).items.isEmpty)
            #expect(try server.get("/api/visitor-scanner/lookup/secret", token: other.scanner).items.isEmpty)
            #expect(try server.get("/api/visitor-scanner/on-site", token: other.scanner).items.isEmpty)
            #expect(try server.get("/api/visitor-scanner/expected", token: other.scanner).items.isEmpty)
            #expect(try server.get("/api/approver/visitors", token: other.approverToken).items.isEmpty)
            let stats = try #require(try server.get("/api/visitor-scanner/stats", token: token).json)
            for key in Shape.stats { #expect(stats[key] as? Int == 0, "\(key)") }
            let csv = try server.get("/api/admin/scan-history.csv", token: token).text
            // Only their own NOT_FOUND scan: the first organization's scans and visitor ids are not there.
            #expect(csv.split(separator: "\r\n").count == 2)
            #expect(!csv.contains(visitor["id"] as! String) && !csv.contains("CHECKED_IN"))
            let checkpoints = try server.get("/api/checkpoints", token: token).items
            #expect(checkpoints.map { $0["id"] as? String } == [other.mainGate])
            // Their owner acting on the ids: 404 everywhere, nothing changes.
            let id = waiting["id"] as! String
            for path in ["/api/visitors/\(id)/cancel", "/api/visitors/\(id)/approve-scan", "/api/visitors/\(id)/reject-scan"] {
                #expect(try server.post(path, token: token).isError(404, "NOT_FOUND"), "\(path)")
            }
            #expect(try server.get("/api/approver/visitors/\(id)", token: other.approverToken).isError(404, "NOT_FOUND"))
            #expect(try server.visitor(id, site.ownerToken)["status"] as? String == "AWAITING_APPROVAL")
        }
    }
}
