import Foundation
import GatePassCore

/// A kiosk's own credential (api.md `POST /api/visitor-scanner/enrol`): a scanner token bound
/// to a gate, not to a person, kept in the state file in place of a login.
public struct KioskEnrolment: Codable, Sendable, Equatable {
    public var server: String
    public var scanner: ScannerTokenAnswer
    public var enrolledAt: Timestamp

    public init(server: String, scanner: ScannerTokenAnswer, enrolledAt: Timestamp) {
        self.server = server; self.scanner = scanner; self.enrolledAt = enrolledAt
    }
}

extension ClientDatabase {
    static let kioskEnrolmentKey = "kiosk_enrolment"
    static let scannerRevokedKey = "scanner_revoked"

    public func kioskEnrolment() throws(ClientError) -> KioskEnrolment? {
        try decodeMeta(KioskEnrolment.self, Self.kioskEnrolmentKey)
    }
    func saveKioskEnrolment(_ enrolment: KioskEnrolment?) throws(ClientError) {
        try encodeMeta(enrolment, Self.kioskEnrolmentKey)
    }

    /// Why the server refused this device's scanner token for good (401 `REVOKED`), until a
    /// new enrolment or login: while set, no scanner request is sent and no token is renewed.
    public func scannerRevocation() throws(ClientError) -> String? { try meta(Self.scannerRevokedKey) }
    func setScannerRevocation(_ message: String?) throws(ClientError) { try setMeta(Self.scannerRevokedKey, message) }
}

extension ClientCore {
    /// Enrols this device as the kiosk of the gate the code was made for, and keeps its
    /// credential in the state file; `gatepass kiosk` then runs without a login. Queued
    /// entries of another server or identity are deleted (as a login of another user does).
    @discardableResult
    public func enrolKiosk(server rawServer: String, code: String) throws(ClientError) -> KioskEnrolment {
        let server = normalized(rawServer)
        let answer = try api(server).enrolKiosk(code: code)
        let scope = Scope(server: server, userId: "kiosk:" + answer.checkpoint.id, email: "")
        if let previous = try store.scope(), previous != scope { try store.purgeIdentityData() }
        let enrolment = KioskEnrolment(server: server, scanner: answer, enrolledAt: Timestamp(clock.now()))
        try store.saveKioskEnrolment(enrolment)
        try store.saveScope(scope)
        try store.setScannerRevocation(nil)
        try store.setDrainPaused(nil)
        return enrolment
    }

    /// The scanner token this device scans with, and its server: an enrolled kiosk's own
    /// credential first, else the login session's token.
    func scannerCredential() throws(ClientError) -> (server: String, scanner: ScannerTokenAnswer?) {
        if let enrolment = try store.kioskEnrolment() { return (enrolment.server, enrolment.scanner) }
        let session = try requireSession()
        return (session.server, session.scanner)
    }

    /// Records a 401 `REVOKED`: no scanner token is renewed or sent until a new enrolment or login.
    func noteRevoked(_ message: String) throws(ClientError) {
        try store.setScannerRevocation(message)
        try store.setDrainPaused(message)
    }

    /// The visitor whose pass has this short id, as the gate's scanner token sees it (lookup);
    /// nil when no pass has it.
    public func scannerLookup(shortId: ShortID) throws(ClientError) -> Visitor? {
        let (server, scanner) = try scannerCredential()
        guard let scanner else { throw .local("this device has no scanner token") }
        return try api(server).lookup(scannerToken: scanner.scannerToken, query: shortId.rawValue).items
            .first { $0.shortId == shortId }
    }

    /// Why the scanner token was revoked, if it was (the kiosk shows it and waits).
    public func scannerRevocation() throws(ClientError) -> String? { try store.scannerRevocation() }

    /// Asks the server once whether the scanner token still works (after the event stream
    /// was refused): a 401 `REVOKED` is recorded, so the gate stops instead of retrying.
    public func probeScannerToken() throws(ClientError) {
        let (server, scanner) = try scannerCredential()
        guard let scanner else { return }
        do throws(ClientError) {
            _ = try api(server).stats(token: scanner.scannerToken)
        } catch {
            if case .revoked(let message) = error { try noteRevoked(message) }
            throw error
        }
    }
}
