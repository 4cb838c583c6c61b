import Foundation
import GatePassCore
import SQLBinding

struct SQLSessionRepository<Database: SQLRunner>: SessionRepository {
    let db: Database
    /// Every change of a session's standing is noted here, so cached sessions are dropped
    /// after the commit (`SessionCache`); a new session or a last-use time is not one.
    let notes: TransactionNotes

    func insert(id: String, userId: String, kind: TokenClaims.Kind, parent: String?, checkpointId: String?,
                createdAt: Date, expiresAt: Date) throws {
        try db.execute("""
            INSERT INTO sessions (id, user_id, kind, parent_session_id, checkpoint_id, created_at, expires_at)
            VALUES (?, ?, ?, ?, ?, ?, ?)
            """, [id, userId, kind == .login ? "login" : "scanner", parent, checkpointId, createdAt.milliseconds,
                  expiresAt.milliseconds])
    }

    func find(id: String) throws -> StoredSession? {
        try db.queryFirst("""
            SELECT s.kind, s.checkpoint_id, s.expires_at, s.revoked_at,
                   u.id, u.email, u.name, u.role, u.organization_id, u.can_scan, u.disabled, s.revoked_reason, s.kiosk_id
            FROM sessions s JOIN users u ON u.id = s.user_id WHERE s.id = ?
            """, [id]) { row in
            let kind = try row.parsed(named: "kind", as: "session kind", TokenClaims.Kind.init(storedName:))
            let expiresAt = try row.date(named: "expires_at")
            let revokedAt = try row.optionalDate(named: "revoked_at")
            let user = try SQLDirectoryRepository<Database>.profile(row)
            let credential: Principal.Credential
            if kind == .login {
                credential = .login
            } else if let kioskId = try row.optionalString(named: "kiosk_id") {
                credential = .kiosk(kioskId: kioskId, checkpointId: try row.string(named: "checkpoint_id"))
            } else {
                credential = .scanner(checkpointId: try row.string(named: "checkpoint_id"))
            }
            return StoredSession(kind: kind, credential: credential, expiresAt: expiresAt, revokedAt: revokedAt,
                                 revokedReason: try row.optionalParsed(named: "revoked_reason", as: "revocation reason",
                                                                       RevocationReason.init(rawValue:)),
                                 user: user, userDisabled: try row.bool(named: "disabled"))
        }
    }

    func revoke(loginSession id: String, at time: Date) throws {
        notes.notePrincipalsChanged()
        try db.execute("UPDATE sessions SET revoked_at = ? WHERE (id = ? OR parent_session_id = ?) AND revoked_at IS NULL",
                       [time.milliseconds, id, id])
    }

    func revoke(sessionsOfUser userId: String, at time: Date) throws {
        notes.notePrincipalsChanged()
        try db.execute("UPDATE sessions SET revoked_at = ? WHERE user_id = ? AND revoked_at IS NULL AND kiosk_id IS NULL",
                       [time.milliseconds, userId])
    }

    func insertKiosk(id: String, kioskId: String, createdBy userId: String, checkpointId: String, createdAt: Date,
                     expiresAt: Date) throws {
        try db.execute("""
            INSERT INTO sessions (id, user_id, kind, parent_session_id, checkpoint_id, created_at, expires_at, kiosk_id)
            VALUES (?, ?, 'scanner', NULL, ?, ?, ?, ?)
            """, [id, userId, checkpointId, createdAt.milliseconds, expiresAt.milliseconds, kioskId])
    }

    func scannerTokens(organizationId: String, now: Date, after cursor: ListCursor?,
                       limit: Int) throws -> [(token: ScannerTokenSummary, cursor: ListCursor)] {
        var sql = """
            SELECT s.id, s.checkpoint_id, s.user_id, s.created_at, s.expires_at, s.last_used_at, k.name, s.rowid
            FROM sessions s JOIN checkpoints c ON c.id = s.checkpoint_id LEFT JOIN kiosks k ON k.id = s.kiosk_id
            WHERE s.kind = 'scanner' AND s.revoked_at IS NULL AND s.expires_at > ? AND c.organization_id = ?
            """
        var arguments: [any SQLBindable] = [now.milliseconds, organizationId]
        KeysetOrder(time: "s.created_at", seq: "s.rowid").appendPage(after: cursor, limit: limit, to: &sql, &arguments)
        return try db.query(sql, arguments) { row in
            let token = ScannerTokenSummary(id: try row.string(named: "id"), checkpointId: try row.string(named: "checkpoint_id"),
                                            createdBy: try row.string(named: "user_id"),
                                            createdAt: Timestamp(try row.date(named: "created_at")),
                                            expiresAt: Timestamp(try row.date(named: "expires_at")),
                                            lastUsedAt: try row.optionalDate(named: "last_used_at").map(Timestamp.init),
                                            kioskName: try row.optionalString(named: "name"))
            return (token, ListCursor(time: try row.milliseconds(named: "created_at"), seq: try row.int64(named: "rowid")))
        }
    }

    func revoke(scannerToken id: String, organizationId: String, reason: RevocationReason, at time: Date) throws -> Bool {
        notes.notePrincipalsChanged()
        return try db.execute("""
            UPDATE sessions SET revoked_at = ?, revoked_reason = ?
            WHERE id = ? AND kind = 'scanner' AND revoked_at IS NULL AND expires_at > ?
              AND checkpoint_id IN (SELECT id FROM checkpoints WHERE organization_id = ?)
            """, [time.milliseconds, reason.rawValue, id, time.milliseconds, organizationId]) > 0
    }

    func revoke(scannerTokensOfCheckpoint checkpointId: String, at time: Date) throws -> Int {
        notes.notePrincipalsChanged()
        return try db.execute("""
            UPDATE sessions SET revoked_at = ?, revoked_reason = 'retired'
            WHERE checkpoint_id = ? AND kind = 'scanner' AND revoked_at IS NULL
            """, [time.milliseconds, checkpointId])
    }

    func recordUse(id: String, at time: Date) throws {
        try db.execute("UPDATE sessions SET last_used_at = ? WHERE id = ?", [time.milliseconds, id])
    }

    func liveSessions(among sessionIds: Set<String>, now: Date) throws -> Set<String> {
        let nowMilliseconds = now.milliseconds
        return try Set(sessionIds.filter { id in
            try db.queryFirst("""
                SELECT 1 FROM sessions s JOIN users u ON u.id = s.user_id
                WHERE s.id = ? AND s.revoked_at IS NULL AND s.expires_at > ? AND (u.disabled = 0 OR s.kiosk_id IS NOT NULL)
                """, [id, nowMilliseconds]) { _ in
                true
            } ?? false
        })
    }
}
