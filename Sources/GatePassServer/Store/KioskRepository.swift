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
