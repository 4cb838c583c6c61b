import Foundation
import GatePassCore

/// A session row with its user, read strictly (see `SessionRepository.find`).
struct StoredSession: Sendable {
    var kind: TokenClaims.Kind
    var credential: Principal.Credential
    var expiresAt: Date
    var revokedAt: Date?
    /// Set when an admin, not the holder, ended the session (401 `REVOKED`).
    var revokedReason: RevocationReason? = nil
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
    /// Ends every session of a user, login and scanner (the user was disabled), but not the
    /// kiosks it enrolled.
    func revoke(sessionsOfUser userId: String, at time: Date) throws
    /// Inserts a kiosk's credential: a scanner session without parent, bound to the kiosk.
    func insertKiosk(id: String, kioskId: String, createdBy userId: String, checkpointId: String, createdAt: Date,
                     expiresAt: Date) throws
    /// The live (neither revoked nor expired) scanner tokens of an organization, newest first.
    func scannerTokens(organizationId: String, now: Date, after cursor: ListCursor?,
                       limit: Int) throws -> [(token: ScannerTokenSummary, cursor: ListCursor)]
    /// Ends one live scanner token of the organization for `reason`; false when there is none.
    func revoke(scannerToken id: String, organizationId: String, reason: RevocationReason, at time: Date) throws -> Bool
    /// Ends every live scanner token of a checkpoint (it was retired); returns how many.
    func revoke(scannerTokensOfCheckpoint checkpointId: String, at time: Date) throws -> Int
    /// Records a use of the session (the caller keeps it to once a minute per token).
    func recordUse(id: String, at time: Date) throws

    /// Which of `sessionIds` are neither revoked nor expired at `now`, nor of a disabled user: a stream lives no
    /// longer than its session.
    func liveSessions(among sessionIds: Set<String>, now: Date) throws -> Set<String>
}
