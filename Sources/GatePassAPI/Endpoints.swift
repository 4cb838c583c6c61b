/// Every endpoint the server serves, grouped as api.md groups them. Names are those the
/// server's controllers and the client use; the permission rule follows from the action.
extension Endpoint {
    // MARK: - Auth
    public static let authSendOTP = Endpoint(.post, "/api/auth/send-otp", .requestLoginCode)
    public static let authVerifyOTP = Endpoint(.post, "/api/auth/verify-otp", .logIn)
    public static let authDevPeekOTP = Endpoint(.get, "/api/auth/dev-peek-otp", .peekLoginCode)
    public static let authMe = Endpoint(.get, "/api/auth/me", .readOwnProfile)
    public static let authLogout = Endpoint(.post, "/api/auth/logout", .logOut)

    // MARK: - Visitors
    public static let visitorsList = Endpoint(.get, "/api/visitors", .listVisitors)
    public static let visitorsCreate = Endpoint(.post, "/api/visitors", .registerVisitor)
    public static let visitorsAdminMe = Endpoint(.get, "/api/visitors/admin-me", .readManagerProfile)
    public static let visitorsGet = Endpoint(.get, "/api/visitors/:id", .readVisitor)
    public static let visitorsCancel = Endpoint(.post, "/api/visitors/:id/cancel", .cancelVisitor)
    public static let visitorsApprove = Endpoint(.post, "/api/visitors/:id/approve-scan", .decideVisitor)
    public static let visitorsReject = Endpoint(.post, "/api/visitors/:id/reject-scan", .decideVisitor)
    public static let visitorsUpdate = Endpoint(.patch, "/api/visitors/:id", .editVisitor)
    public static let visitorsPass = Endpoint(.get, "/api/visitors/:id/pass.svg", .renderPass)
    public static let visitorsPassPNG = Endpoint(.get, "/api/visitors/:id/pass.png", .renderPass)
    public static let visitorsInvite = Endpoint(.post, "/api/visitors/:id/invite", .inviteVisitor)
    public static let visitorsCheckOut = Endpoint(.post, "/api/visitors/:id/checkout", .checkOutVisitor)
    /// The visitor's own pass page: no login, the unguessable token is the credential.
    public static let passPage = Endpoint(.get, "/p/:passToken", .openPassPage)
    public static let visitorsDeviceRegister = Endpoint(.post, "/api/visitors/devices/register", .registerManagerDevice)
    public static let visitorsDeviceUnregister = Endpoint(.post, "/api/visitors/devices/unregister", .unregisterManagerDevice)

    // MARK: - Approver
    public static let approverMe = Endpoint(.get, "/api/approver/me", .readApproverProfile)
    public static let approverList = Endpoint(.get, "/api/approver/visitors", .listApprovalQueue)
    public static let approverGet = Endpoint(.get, "/api/approver/visitors/:id", .readQueuedVisitor)
    public static let approverApprove = Endpoint(.post, "/api/approver/visitors/:id/approve", .decideQueuedVisitor)
    public static let approverReject = Endpoint(.post, "/api/approver/visitors/:id/reject", .decideQueuedVisitor)
    public static let approverDeviceRegister = Endpoint(.post, "/api/approver/devices/register", .registerApproverDevice)
    public static let approverDeviceUnregister = Endpoint(.post, "/api/approver/devices/unregister", .unregisterApproverDevice)

    // MARK: - Scanner
    public static let scannerToken = Endpoint(.post, "/api/visitor-scanner/token", .issueScannerToken)
    public static let scannerStats = Endpoint(.get, "/api/visitor-scanner/stats", .readGateStats)
    public static let scannerHistory = Endpoint(.get, "/api/visitor-scanner/scan-history", .readScanHistory)
    public static let scannerCheckIn = Endpoint(.post, "/api/visitor-scanner/checkin", .checkIn)
    public static let scannerCheckOut = Endpoint(.post, "/api/visitor-scanner/checkout", .checkOut)
    public static let scannerLookup = Endpoint(.get, "/api/visitor-scanner/lookup/:query", .lookUpVisitor)
    public static let scannerWalkIn = Endpoint(.post, "/api/visitor-scanner/walk-in-arrived", .registerWalkIn)
    public static let scannerOnSite = Endpoint(.get, "/api/visitor-scanner/on-site", .listOnSite)
    public static let scannerExpected = Endpoint(.get, "/api/visitor-scanner/expected", .listExpectedPasses)
    public static let scannerPassKeys = Endpoint(.get, "/api/visitor-scanner/pass-keys", .listPassKeys)

    // MARK: - Site
    public static let adminHistoryCSV = Endpoint(.get, "/api/admin/scan-history.csv", .exportScanHistory)
    public static let checkpointsList = Endpoint(.get, "/api/checkpoints", .listCheckpoints)
    public static let checkpointsCreate = Endpoint(.post, "/api/checkpoints", .createCheckpoint)
    public static let organizationGet = Endpoint(.get, "/api/organization", .readOrganization)
    public static let organizationUpdate = Endpoint(.patch, "/api/organization", .updateOrganization)
    public static let usersList = Endpoint(.get, "/api/users", .listUsers)
    public static let usersCreate = Endpoint(.post, "/api/users", .createUser)
    public static let usersUpdate = Endpoint(.patch, "/api/users/:id", .updateUser)
    public static let adminMailList = Endpoint(.get, "/api/admin/mail", .readMailLog)
    public static let adminMailTest = Endpoint(.post, "/api/admin/mail/test", .sendTestMail)

    // MARK: - Governance (api.md "Users, checkpoints, scanner tokens", "Audit log", "Retention")
    public static let checkpointsUpdate = Endpoint(.patch, "/api/checkpoints/:id", .updateCheckpoint)
    public static let adminScannerTokens = Endpoint(.get, "/api/admin/scanner-tokens", .listScannerTokens)
    public static let adminScannerTokenRevoke = Endpoint(.post, "/api/admin/scanner-tokens/:id/revoke", .revokeScannerToken)
    public static let adminKiosksCreate = Endpoint(.post, "/api/admin/kiosks", .createKioskEnrolment)
    public static let scannerEnrol = Endpoint(.post, "/api/visitor-scanner/enrol", .enrolKiosk)
    public static let adminAudit = Endpoint(.get, "/api/admin/audit", .readAuditLog)
    public static let adminAuditCSV = Endpoint(.get, "/api/admin/audit.csv", .exportAuditLog)
    public static let adminRetentionRun = Endpoint(.post, "/api/admin/retention/run", .runRetention)
    public static let adminVisitorErase = Endpoint(.post, "/api/admin/visitors/:id/erase", .eraseVisitor)
    public static let adminVisitorExport = Endpoint(.get, "/api/admin/visitors/:id/export", .exportVisitor)

    // MARK: - Blocklist
    public static let blocklistList = Endpoint(.get, "/api/blocklist", .listBlocklist)
    public static let blocklistAdd = Endpoint(.post, "/api/blocklist", .addBlocklistEntry)
    public static let blocklistRemove = Endpoint(.delete, "/api/blocklist/:id", .removeBlocklistEntry)

    // MARK: - Events, notifications, push
    public static let eventsStream = Endpoint(.get, "/api/events", .followEvents)
    public static let eventsTicket = Endpoint(.post, "/api/events/ticket", .issueEventTicket)
    public static let notificationsList = Endpoint(.get, "/api/notifications", .listNotifications)
    public static let notificationsRead = Endpoint(.post, "/api/notifications/:id/read", .markNotificationRead)
    public static let notificationsDelete = Endpoint(.delete, "/api/notifications/:id", .deleteNotification)
    /// Not in api.md: what `gatepass push-test --server` calls (README "Push").
    public static let adminPushTest = Endpoint(.post, "/api/admin/push-test", .sendTestPush)
    /// Not in api.md: what `gatepass push-deliveries --server` calls (README "Push").
    public static let adminPushDeliveries = Endpoint(.get, "/api/admin/push-deliveries", .listPushDeliveries)

    // MARK: - Operations
    public static let healthz = Endpoint(.get, "/api/healthz", .checkHealth)
    public static let metrics = Endpoint(.get, "/metrics", .readMetrics)
}
