import GatePassCore
import HTTPServer
import SQLite

extension GatePassApplication {
    /// GET routes, on a reader connection.
    func read(_ call: Call, _ db: Connection) throws -> HTTPResponse {
        switch call.route {
        case .authDevPeekOTP: return try devPeekOTP(call)
        case .authMe, .approverMe: return JSONBody.response(call.caller.user)
        case .visitorsAdminMe: return try adminMe(call)
        case .visitorsList: return try listVisitors(call, db)
        case .visitorsGet: return JSONBody.response(try visibleVisitor(call, db).visitor)
        case .visitorsPass: return try passSVG(call, db)
        case .approverList: return try approverQueue(call, db)
        case .approverGet: return try approverVisitor(call, db)
        case .scannerStats: return try stats(call, db)
        case .scannerHistory: return try scanHistory(call, db)
        case .scannerLookup: return try lookup(call, db)
        case .scannerOnSite: return try onSite(call, db)
        case .scannerExpected: return try expected(call, db)
        case .adminHistoryCSV: return try scanHistoryCSV(call, db)
        case .checkpointsList: return try listCheckpoints(call, db)
        case .healthz: return try healthz(db)
        case .eventsStream: return try openEventStream(call, db)
        case .notificationsList: return try listNotifications(call, db)
        case .adminPushDeliveries: return try pushDeliveries(call, db)
        case .notificationsRead, .notificationsDelete, .adminPushTest,
             .metrics, .authSendOTP, .authVerifyOTP, .authLogout, .visitorsCreate, .visitorsCancel,
             .visitorsApprove, .visitorsReject, .visitorsDeviceRegister, .visitorsDeviceUnregister,
             .approverApprove, .approverReject, .approverDeviceRegister, .approverDeviceUnregister,
             .scannerToken, .scannerCheckIn, .scannerCheckOut, .scannerWalkIn, .checkpointsCreate:
            preconditionFailure("\(call.route) is not a GET route")
        }
    }

    /// POST routes, inside a write transaction.
    func write(_ call: Call, _ db: Connection) throws -> HTTPResponse {
        switch call.route {
        case .authSendOTP: return try sendOTP(call, db)
        case .authVerifyOTP: return try verifyOTP(call, db)
        case .authLogout: return try logout(call, db)
        case .visitorsCreate: return try createVisitor(call, db)
        case .visitorsCancel: return try cancelVisitor(call, db)
        case .visitorsApprove: return try decide(.approve, call, db)
        case .visitorsReject: return try decide(.reject, call, db)
        case .approverApprove: return try decide(.approve, call, db)
        case .approverReject: return try decide(.reject, call, db)
        case .visitorsDeviceRegister, .approverDeviceRegister: return try registerDevice(call, db)
        case .visitorsDeviceUnregister, .approverDeviceUnregister: return try unregisterDevice(call, db)
        case .scannerToken: return try issueScannerToken(call, db)
        case .scannerCheckIn: return try checkIn(call, db)
        case .scannerCheckOut: return try checkOut(call, db)
        case .scannerWalkIn: return try walkIn(call, db)
        case .checkpointsCreate: return try createCheckpoint(call, db)
        case .notificationsRead: return try readNotification(call, db)
        case .notificationsDelete: return try deleteNotification(call, db)
        case .adminPushTest: preconditionFailure("push-test answers after its deliveries, not in a transaction")
        case .eventsStream, .notificationsList, .adminPushDeliveries,
             .authDevPeekOTP, .authMe, .visitorsList, .visitorsAdminMe, .visitorsGet, .visitorsPass, .approverMe,
             .approverList, .approverGet, .scannerStats, .scannerHistory, .scannerLookup, .scannerOnSite,
             .scannerExpected, .adminHistoryCSV, .checkpointsList, .healthz, .metrics:
            preconditionFailure("\(call.route) is not a POST route")
        }
    }

    static let noContent = HTTPResponse(status: 204)
}
