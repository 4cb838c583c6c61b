import Foundation
import GatePassCore

/// A session row with its user, read strictly (see `SessionRepository.find`).
struct StoredSession: Sendable {
    var kind: TokenClaims.Kind
    var credential: Principal.Credential
    var expiresAt: Date
    var revokedAt: Date?
    var user: Profile
    /// A disabled user's sessions are revoked when it is disabled; this is the backstop.
    var userDisabled: Bool = false
}

/// Sessions: one per login and per scanner token, revoked on logout.
protocol SessionRepository {
    func insert(id: String, userId: String, kind: TokenClaims.Kind, parent: String?, checkpointId: String?,
                createdAt: Date, expiresAt: Date) throws
    /// The session and its user. An unknown kind or role, or a scanner session without its
    /// checkpoint, throws: damage is never mistaken for an ended session.
    func find(id: String) throws -> StoredSession?
    /// Ends a login session and every scanner session it created.
    func revoke(loginSession id: String, at time: Date) throws
    /// Ends every session of a user, login and scanner (the user was disabled).
    func revoke(sessionsOfUser userId: String, at time: Date) throws

    /// Which of `sessionIds` are neither revoked nor expired at `now`, nor of a disabled user: a stream lives no
    /// longer than its session.
    func liveSessions(among sessionIds: Set<String>, now: Date) throws -> Set<String>
}
