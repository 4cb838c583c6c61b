import Foundation
import GatePassCore

/// A kiosk an admin announced with an enrolment code (`POST /api/admin/kiosks`).
struct StoredKiosk: Sendable, Equatable {
    var id: String
    var organizationId: String
    var checkpointId: String
    var name: String
    var createdBy: String
    var codeExpiresAt: Date
    var enrolledAt: Date?
}

/// Kiosks and their one-time enrolment codes; the codes are stored only as an HMAC.
protocol KioskRepository {
    func insert(_ kiosk: StoredKiosk, codeHash: [UInt8], createdAt: Date) throws
    /// The kiosk whose unused code hashes to `codeHash`, expired or not.
    func find(codeHash: [UInt8]) throws -> StoredKiosk?
    /// Uses up the kiosk's code; false when another request used it first.
    func markEnrolled(kioskId: String, codeHash: [UInt8], at time: Date) throws -> Bool
    /// Wrong enrolment codes counted in the window that starts at `windowStart` (0 in another window).
    func wrongCodes(inWindowStartingAt windowStart: Int64) throws -> Int
    /// Counts one wrong code in the window starting at `windowStart` (an older window's count is dropped).
    func recordWrongCode(inWindowStartingAt windowStart: Int64) throws
}

/// The organizations' end-of-day check-out settings and the day each last ran for.
protocol AutoCheckoutRepository {
    /// Organizations with `autoCheckoutAt` set: the setting, their own zone (nil: the
    /// server's) and the site-local day the check-out last ran for.
    func scheduled() throws -> [(organizationId: String, clockTime: String, timeZone: String?, doneOn: String?)]
    /// Records that the check-out ran for site-local `day` (`YYYY-MM-DD`).
    func recordRun(organizationId: String, day: String) throws
}

/// A device's last successful `/expected` answer (api.md "Which offline claims count").
struct DeviceSync: Sendable, Equatable {
    var at: Date
    var cursor: String
}

/// What each scanning device was told by `/expected`, so its offline claims are judged against
/// what it knew. A device is a kiosk's enrolment, or a chain of scanner tokens renewed from one
/// another (each renewal is linked to the device of the token it renews).
protocol ScannerDeviceRepository {
    /// The device a scanner session belongs to, when a renewal linked it; nil: its own.
    func deviceId(sessionId: String) throws -> String?
    /// Links a new scanner session to the device of the token it renews.
    func link(sessionId: String, deviceId: String) throws
    /// Records one `/expected` answer: its time and cursor, and what it told of each visitor
    /// it carried. A full load (no cursor) also forgets what the device was told more than
    /// `forgetBefore` ago.
    func recordExpected(deviceId: String, organizationId: String, sync: DeviceSync,
                        told: [(visitorId: String, knowledge: DeviceKnowledge)], forgetBefore: Date?) throws
    /// The device's last successful `/expected` answer; nil before its first.
    func lastSync(deviceId: String) throws -> DeviceSync?
    /// What the device's answers last told of the visitor; nil when none carried it.
    func knowledge(deviceId: String, visitorId: String) throws -> DeviceKnowledge?
}
