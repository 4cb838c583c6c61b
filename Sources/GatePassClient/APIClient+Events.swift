import Foundation
import GatePassAPI
import GatePassCore

// The notification list of api.md and the push-token registry's operator routes.
extension APIClient {
    public func notifications(token: String, unreadOnly: Bool = false, limit: Int? = nil,
                              cursor: String? = nil) throws(ClientError) -> Page<NotificationItem> {
        try request(Page<NotificationItem>.self, .notificationsList,
                    query: [("unread", unreadOnly ? "true" : nil), ("limit", limit.map(String.init)), ("cursor", cursor)],
                    token: token)
    }

    public func readNotification(token: String, id: String) throws(ClientError) -> NotificationItem {
        try request(NotificationItem.self, .notificationsRead, id, token: token)
    }

    public func deleteNotification(token: String, id: String) throws(ClientError) {
        _ = try send(.notificationsDelete, id, token: token)
    }

    /// `POST /api/admin/push-test` (OWNER/ADMIN): answered once every device got its test or
    /// `waitSeconds` ran out.
    public func pushTest(token: String, deviceToken: String?, waitSeconds: Double) throws(ClientError) -> Page<PushTestOutcome> {
        struct Body: Encodable { var token: String?; var waitSeconds: Double }
        return try request(Page<PushTestOutcome>.self, .adminPushTest, token: token,
                           json: Body(token: deviceToken, waitSeconds: waitSeconds))
    }

    public func pushDeliveries(token: String, deviceToken: String, limit: Int? = nil,
                               cursor: String? = nil) throws(ClientError) -> Page<PushDelivery> {
        try request(Page<PushDelivery>.self, .adminPushDeliveries,
                    query: [("token", deviceToken), ("limit", limit.map(String.init)), ("cursor", cursor)],
                    token: token)
    }
}

extension ClientCore {
    /// The logged-in session, checked to be on `server` when one is named.
    public func session(on server: String?) throws(ClientError) -> Session {
        let session = try requireSession()
        if let server, normalized(server) != session.server {
            throw .local("this device is logged in to \(session.server), not \(normalized(server)); run: gatepass login --server \(normalized(server)) --email YOU")
        }
        return session
    }

    public func pushTest(server: String?, deviceToken: String?, waitSeconds: Double) throws(ClientError) -> [PushTestOutcome] {
        let session = try session(on: server)
        // The request waits for the deliveries: give it that long on top of the usual time.
        return try api(session.server).pushTest(token: session.token, deviceToken: deviceToken, waitSeconds: waitSeconds).items
    }

    public func pushDeliveries(server: String?, deviceToken: String, limit: Int) throws(ClientError) -> Page<PushDelivery> {
        let session = try session(on: server)
        return try api(session.server).pushDeliveries(token: session.token, deviceToken: deviceToken, limit: limit)
    }

    public func notifications(unreadOnly: Bool = false, limit: Int? = nil) throws(ClientError) -> Page<NotificationItem> {
        let session = try requireSession()
        return try api(session.server).notifications(token: session.token, unreadOnly: unreadOnly, limit: limit)
    }
}

extension ClientCore {
    /// Which token a stream follows: a console follows the user's login, a kiosk its
    /// scanner token (the events of its checkpoint).
    public enum StreamCredential: Sendable {
        case login
        case scanner
    }

    /// A consumer of this device's live events: the session's server, this device's push
    /// token, the current token read again on every connect, and the last id kept in the
    /// state file so a new process resumes where the last one stopped.
    /// - Parameter transport: the stream's handle; by default a separate handle of the core's
    ///   transport (same connect timeout and CA file), so the stream never holds a request.
    public func eventConsumer(credential: StreamCredential = .login,
                              idleTimeout: Duration = .seconds(45), backoff: Backoff = Backoff(base: 1, cap: 60),
                              transport: (any HTTPTransport)? = nil,
                              onStatus: @escaping @Sendable (EventStreamConsumer.Status) -> Void = { _ in },
                              onEvent: @escaping @Sendable (ServerEvent) -> Void) throws(ClientError) -> EventStreamConsumer {
        let server: String
        if credential == .scanner {
            let scanning = try scannerCredential()
            guard scanning.scanner != nil else {
                throw .local("this user has no scanner token: only users who may scan can follow a checkpoint's events")
            }
            server = scanning.server
        } else {
            server = try requireSession().server
        }
        let store = self.store
        return EventStreamConsumer(
            configuration: .init(server: server, deviceToken: try store.deviceToken(), idleTimeout: idleTimeout,
                                 backoff: backoff),
            transport: transport ?? self.transport.separateHandle(),
            token: {
                let session: Session? = (try? store.session()) ?? nil
                guard credential == .scanner else { return session?.token }
                // A revoked token is not presented again: the consumer ends.
                let revoked: String? = (try? store.scannerRevocation()) ?? nil
                guard revoked == nil else { return nil }
                let enrolment: KioskEnrolment? = (try? store.kioskEnrolment()) ?? nil
                return enrolment?.scanner.scannerToken ?? session?.scanner?.scannerToken
            },
            lastEventIDs: store, onStatus: onStatus, onEvent: onEvent)
    }
}

extension ClientCore {
    /// The session's scanner token, obtained now if the login did not get one (the server was
    /// away at login) or it has expired; the gate needs it before its first scan.
    public func ensureScannerToken(now: Date) throws(ClientError) -> ScannerTokenAnswer {
        if let revoked = try store.scannerRevocation() { throw .revoked(revoked) }
        if let enrolment = try store.kioskEnrolment() { return enrolment.scanner }
        var session = try requireSession()
        if let scanner = session.scanner, scanner.expiresAt.date > now.addingTimeInterval(60) { return scanner }
        guard session.user.principalKind.mayScan else {
            throw .local("\(session.user.email) may not scan: log the kiosk in as a user who may (OWNER, ADMIN, or an APPROVER with canScanCheckpoint)")
        }
        let answer = try api(session.server).scannerToken(token: session.token, checkpointId: session.scanner?.checkpoint.id,
                                                          previous: try store.scannerTokenToContinue(session))
        session.scanner = answer
        try store.saveSession(session)
        return answer
    }
}
