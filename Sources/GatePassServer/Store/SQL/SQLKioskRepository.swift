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

struct SQLScannerDeviceRepository<Database: SQLRunner>: ScannerDeviceRepository {
    let db: Database

    func deviceId(sessionId: String) throws -> String? {
        try db.queryFirst("SELECT device_id FROM scanner_device_links WHERE session_id = ?", [sessionId]) { try $0.string(named: "device_id") }
    }

    func link(sessionId: String, deviceId: String) throws {
        try db.execute("INSERT INTO scanner_device_links (session_id, device_id) VALUES (?, ?)", [sessionId, deviceId])
    }

    func recordExpected(deviceId: String, organizationId: String, sync: DeviceSync,
                        told: [(visitorId: String, knowledge: DeviceKnowledge)], forgetBefore: Date?) throws {
        try db.execute("""
            INSERT INTO scanner_devices (device_id, organization_id, expected_at, expected_cursor) VALUES (?, ?, ?, ?)
            ON CONFLICT (device_id) DO UPDATE SET expected_at = excluded.expected_at, expected_cursor = excluded.expected_cursor
            """, [deviceId, organizationId, sync.at.milliseconds, sync.cursor])
        if let forgetBefore {
            try db.execute("DELETE FROM scanner_device_passes WHERE device_id = ? AND told_at < ?",
                           [deviceId, forgetBefore.milliseconds])
        }
        // `refused_since`: the first answer of the current refusal (a later one keeps it).
        for (visitorId, knowledge) in told {
            try db.execute("""
                INSERT INTO scanner_device_passes (device_id, visitor_id, admissible, told_at, refused_since) VALUES (?, ?, ?, ?, ?)
                ON CONFLICT (device_id, visitor_id) DO UPDATE SET admissible = excluded.admissible, told_at = excluded.told_at,
                    refused_since = CASE WHEN excluded.admissible = 1 THEN NULL
                                         ELSE COALESCE(scanner_device_passes.refused_since, excluded.refused_since) END
                """, [deviceId, visitorId, knowledge.admissible ? Int64(1) : Int64(0), sync.at.milliseconds,
                      knowledge.admissible ? nil : sync.at.milliseconds])
        }
    }

    func lastSync(deviceId: String) throws -> DeviceSync? {
        try db.queryFirst("SELECT expected_at, expected_cursor FROM scanner_devices WHERE device_id = ?", [deviceId]) { row in
            DeviceSync(at: try row.date(named: "expected_at"), cursor: try row.string(named: "expected_cursor"))
        }
    }

    func knowledge(deviceId: String, visitorId: String) throws -> DeviceKnowledge? {
        try db.queryFirst("SELECT admissible, refused_since FROM scanner_device_passes WHERE device_id = ? AND visitor_id = ?",
                          [deviceId, visitorId]) { row in
            do {
                return try DeviceKnowledge(admissible: try row.bool(named: "admissible"), refusedSince: try row.optionalDate(named: "refused_since"))
            } catch is DeviceKnowledge.Inconsistent {
                throw row.unreadable(try row.column(named: "refused_since"), "a refusal needs its time, and only a refusal has one")
            }
        }
    }
}
