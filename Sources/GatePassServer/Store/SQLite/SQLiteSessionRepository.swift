import Foundation
import GatePassCore
import SQLite

struct SQLiteSessionRepository: SessionRepository {
    let db: Connection

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
                   u.id, u.email, u.name, u.role, u.organization_id, u.can_scan, u.disabled
            FROM sessions s JOIN users u ON u.id = s.user_id WHERE s.id = ?
            """, [id]) { row in
            let kind = try row.parsed(0, as: "session kind", TokenClaims.Kind.init(storedName:))
            let expiresAt = try row.date(2)
            let revokedAt = try row.optionalDate(3)
            let user = try SQLiteDirectoryRepository.profile(row, from: 4)
            let credential: Principal.Credential = kind == .login ? .login : .scanner(checkpointId: try row.string(1))
            return StoredSession(kind: kind, credential: credential, expiresAt: expiresAt, revokedAt: revokedAt, user: user,
                                 userDisabled: try row.bool(10))
        }
    }

    func revoke(loginSession id: String, at time: Date) throws {
        try db.execute("UPDATE sessions SET revoked_at = ? WHERE (id = ? OR parent_session_id = ?) AND revoked_at IS NULL",
                       [time.milliseconds, id, id])
    }

    func revoke(sessionsOfUser userId: String, at time: Date) throws {
        try db.execute("UPDATE sessions SET revoked_at = ? WHERE user_id = ? AND revoked_at IS NULL", [time.milliseconds, userId])
    }

    func liveSessions(among sessionIds: Set<String>, now: Date) throws -> Set<String> {
        let nowMilliseconds = now.milliseconds
        return try Set(sessionIds.filter { id in
            try db.queryFirst("""
                SELECT 1 FROM sessions s JOIN users u ON u.id = s.user_id
                WHERE s.id = ? AND s.revoked_at IS NULL AND s.expires_at > ? AND u.disabled = 0
                """, [id, nowMilliseconds]) { _ in
                true
            } ?? false
        })
    }
}
