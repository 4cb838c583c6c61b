import Foundation
import GatePassCore

/// Who is logged in on this device, against which server. Kept in the state file (0600).
public struct Session: Codable, Sendable, Equatable {
    public var server: String
    public var token: String
    public var expiresAt: Timestamp
    public var user: Profile
    /// Obtained at login when the user may scan, so check-ins can queue even if the server
    /// goes away right after login; renewed by the drain when it is refused.
    public var scanner: ScannerTokenAnswer?

    public init(server: String, token: String, expiresAt: Timestamp, user: Profile, scanner: ScannerTokenAnswer?) {
        self.server = server; self.token = token; self.expiresAt = expiresAt; self.user = user; self.scanner = scanner
    }
}

/// The pair local data belongs to (architecture.md "Client state"): a different pair
/// signing in purges the previous one's cache and queue.
public struct Scope: Codable, Sendable, Equatable {
    public var server: String
    public var userId: String
    public var email: String
}

extension ClientDatabase {
    static let sessionKey = "session"
    static let scopeKey = "scope"
    static let deviceTokenKey = "device_token"
    static let deviceRegistrationKey = "device_registration"
    static let drainPausedKey = "drain_paused"
    /// The scanner token of the session a logout ended, which the next login of the same user
    /// on this device continues (so the server keeps judging this device's offline scans by
    /// what it was told).
    static let previousScannerTokenKey = "previous_scanner_token"

    /// The scanner token a new one for `session` continues: the session's own, else the one a
    /// logout kept (the login after it found the server away).
    func scannerTokenToContinue(_ session: Session) throws(ClientError) -> String? {
        if let token = session.scanner?.scannerToken { return token }
        return try meta(Self.previousScannerTokenKey)
    }

    func decodeMeta<T: Decodable>(_ type: T.Type, _ key: String) throws(ClientError) -> T? {
        guard let text = try meta(key) else { return nil }
        do {
            return try JSONDecoder().decode(T.self, from: Data(text.utf8))
        } catch {
            throw .local("the state file's \(key) is unreadable; log in again (\(error))")
        }
    }

    func encodeMeta<T: Encodable>(_ value: T?, _ key: String) throws(ClientError) {
        try setMeta(key, value.map { CanonicalJSON.string($0) })
    }

    public func session() throws(ClientError) -> Session? { try decodeMeta(Session.self, Self.sessionKey) }
    func saveSession(_ session: Session?) throws(ClientError) { try encodeMeta(session, Self.sessionKey) }
    public func scope() throws(ClientError) -> Scope? { try decodeMeta(Scope.self, Self.scopeKey) }
    func saveScope(_ scope: Scope) throws(ClientError) { try encodeMeta(scope, Self.scopeKey) }

    /// This device's push token: made once per state folder (32 random bytes, URL-safe) and
    /// kept across logins.
    public func deviceToken() throws(ClientError) -> String {
        if let existing = try meta(Self.deviceTokenKey) {
            // The server's rule for device tokens; anything else was not made here.
            guard (1...512).contains(existing.utf8.count), existing.utf8.allSatisfy({ (0x21...0x7E).contains($0) }) else {
                throw .local("the state file's device token is unreadable; delete the state folder to make a new one")
            }
            return existing
        }
        var generator = SystemRandomNumberGenerator()
        let bytes = (0..<32).map { _ in UInt8.random(in: 0...255, using: &generator) }
        let token = "gpd_" + Data(bytes).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
        try setMeta(Self.deviceTokenKey, token)
        return token
    }

    /// Whether the drain stopped on a 401 and waits for a new login.
    public func isDrainPaused() throws(ClientError) -> Bool { try meta(Self.drainPausedKey) != nil }
    func setDrainPaused(_ reason: String?) throws(ClientError) { try setMeta(Self.drainPausedKey, reason) }
    public func drainPauseReason() throws(ClientError) -> String? { try meta(Self.drainPausedKey) }
}
