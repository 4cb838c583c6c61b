import Foundation
import GatePassCore
import SQLBinding

struct SQLKioskRepository<Database: SQLRunner>: KioskRepository {
    let db: Database

    func insert(_ kiosk: StoredKiosk, codeHash: [UInt8], createdAt: Date) throws {
        try db.execute("""
            INSERT INTO kiosks (id, organization_id, checkpoint_id, name, created_by, created_at, code_hash, code_expires_at)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?)
            """, [kiosk.id, kiosk.organizationId, kiosk.checkpointId, kiosk.name, kiosk.createdBy, createdAt.milliseconds,
                  codeHash, kiosk.codeExpiresAt.milliseconds])
    }

    func find(codeHash: [UInt8]) throws -> StoredKiosk? {
        try db.queryFirst("""
            SELECT id, organization_id, checkpoint_id, name, created_by, code_expires_at, enrolled_at
            FROM kiosks WHERE code_hash = ?
            """, [codeHash]) { row in
            StoredKiosk(id: try row.string(named: "id"), organizationId: try row.string(named: "organization_id"),
                        checkpointId: try row.string(named: "checkpoint_id"), name: try row.string(named: "name"),
                        createdBy: try row.string(named: "created_by"), codeExpiresAt: try row.date(named: "code_expires_at"),
                        enrolledAt: try row.optionalDate(named: "enrolled_at"))
        }
    }

    func markEnrolled(kioskId: String, codeHash: [UInt8], at time: Date) throws -> Bool {
        try db.execute("UPDATE kiosks SET code_hash = NULL, enrolled_at = ? WHERE id = ? AND code_hash = ?",
                       [time.milliseconds, kioskId, codeHash]) == 1
    }

    func wrongCodes(inWindowStartingAt windowStart: Int64) throws -> Int {
        Int(try db.scalarInt("SELECT count FROM rate_windows WHERE name = 'enrolment_wrong' AND window_start = ?",
                             [windowStart]) ?? 0)
    }

    func recordWrongCode(inWindowStartingAt windowStart: Int64) throws {
        try db.execute("""
            INSERT INTO rate_windows (name, window_start, count) VALUES ('enrolment_wrong', ?, 1)
            ON CONFLICT (name) DO UPDATE SET
                count = CASE WHEN rate_windows.window_start = excluded.window_start THEN rate_windows.count + 1 ELSE 1 END,
                window_start = excluded.window_start
            """, [windowStart])
    }
}

struct SQLAutoCheckoutRepository<Database: SQLRunner>: AutoCheckoutRepository {
    let db: Database

    func scheduled() throws -> [(organizationId: String, clockTime: String, timeZone: String?, doneOn: String?)] {
        try db.query("""
            SELECT id, auto_checkout_at, time_zone, auto_checkout_done_on FROM organizations
            WHERE auto_checkout_at IS NOT NULL ORDER BY id
            """) { row in
            (try row.string(named: "id"), try row.string(named: "auto_checkout_at"), try row.optionalString(named: "time_zone"),
             try row.optionalString(named: "auto_checkout_done_on"))
        }
    }

    func recordRun(organizationId: String, day: String) throws {
        try db.execute("UPDATE organizations SET auto_checkout_done_on = ? WHERE id = ?", [day, organizationId])
    }
}
