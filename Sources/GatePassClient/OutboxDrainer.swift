import Foundation
import GatePassCore

/// What one drain did.
public struct DrainReport: Sendable {
    public var applied: [OutboxEntry] = []
    /// The server's answer body for each applied entry, by entry id (a gate shows what its
    /// replayed check-ins became).
    public var answers: [Int64: [UInt8]] = [:]
    public var deadLettered: [OutboxEntry] = []
    /// Entries that failed for now and wait for their next attempt.
    public var deferred: [OutboxEntry] = []
    /// Entries not tried because their backoff has not run out.
    public var waiting: [OutboxEntry] = []
    /// Set when the drain stopped because the server cannot be reached.
    public var offline = false
    /// Set when the drain stopped on a 401: nothing more goes until the user logs in again.
    public var pausedForLogin: String?
    /// Set when another process was draining this state folder.
    public var busy = false
    /// Set when local state could not be read or written (the drain stopped).
    public var failure: String?
    /// Entries left in the outbox afterwards.
    public var remaining = 0
}

/// Replays the outbox: oldest first; 2xx → the entry leaves the outbox; other 4xx → dead
/// letters; 401 → stop until the user logs in again (a scanner token is renewed first);
/// 5xx, timeout, no network → attempts + 1 and exponential backoff with full jitter.
///
/// Exactly once: every attempt carries the entry's idempotency key, and an entry is deleted
/// only after its 2xx is recorded, so a crash at any instant leads to a replay that the
/// server answers from its idempotency store without applying anything twice.
public final class OutboxDrainer: Sendable {
    let store: ClientDatabase
    let transport: any HTTPTransport
    let clock: any WallClock
    let backoff: Backoff
    let lockPath: String

    public init(store: ClientDatabase, transport: any HTTPTransport, clock: any WallClock, backoff: Backoff = Backoff(),
                directory: StateDirectory) {
        self.store = store
        self.transport = transport
        self.clock = clock
        self.backoff = backoff
        lockPath = directory.path + "/drain.lock"
    }

    /// The outcome of sending one entry.
    public enum Attempt: Sendable {
        case applied(HTTPResponse)
        case retryable(ClientError)
        case refused(status: Int, code: String, message: String)
        case unauthorized(String)
    }

    /// Sends `entry` once (renewing a refused scanner token and trying again) and returns
    /// what happened, without touching the outbox.
    /// - Parameter replay: true when the send is a replay from the queue (check-ins then say
    ///   `offline: true` and their real `scannedAt`), false for the first, interactive try.
    public func send(_ entry: OutboxEntry, replay: Bool) -> Attempt {
        do throws(ClientError) {
            if entry.credential == .scanner {
                // Revoked is final: nothing is sent, and no login makes a new token.
                if let revoked = try store.scannerRevocation() { return .unauthorized(revoked) }
                // An enrolled kiosk's own credential: bound to the gate, never renewed.
                if let enrolment = try store.kioskEnrolment() {
                    let api = APIClient(baseURL: enrolment.server, transport: transport)
                    return .applied(try api.send(entry.method, url: entry.url, token: enrolment.scanner.scannerToken,
                                                 body: body(of: entry, replay: replay), idempotencyKey: entry.idempotencyKey))
                }
            }
            guard var session = try store.session() else { return .unauthorized("no one is logged in on this device") }
            let api = APIClient(baseURL: session.server, transport: transport)
            var renewed = false
            while true {
                let token: String
                switch entry.credential {
                case .login:
                    token = session.token
                case .scanner:
                    if session.scanner == nil {
                        session = try renewScannerToken(session, api: api)
                        renewed = true
                    }
                    token = session.scanner!.scannerToken
                }
                do throws(ClientError) {
                    let response = try api.send(entry.method, url: entry.url, token: token, body: body(of: entry, replay: replay),
                                                idempotencyKey: entry.idempotencyKey)
                    return .applied(response)
                } catch {
                    if case .unauthorized = error, entry.credential == .scanner, !renewed {
                        // A scanner token ends on its own (30 days) or with the session that made
                        // it; a live login can make a new one.
                        session = try renewScannerToken(session, api: api)
                        renewed = true
                        continue
                    }
                    throw error
                }
            }
        } catch {
            switch error {
            case .unauthorized(let message): return .unauthorized(message)
            case .revoked(let message):
                try? store.setScannerRevocation(message)
                return .unauthorized(message)
            case .permanent(let status, let code, let message): return .refused(status: status, code: code, message: message)
            case .offline, .transient, .local: return .retryable(error)
            case .decoding(let detail): return .retryable(.decoding(detail))
            }
        }
    }

    private func renewScannerToken(_ session: Session, api: APIClient) throws(ClientError) -> Session {
        var updated = session
        updated.scanner = try api.scannerToken(token: session.token, checkpointId: session.scanner?.checkpoint.id)
        try store.saveSession(updated)
        return updated
    }

    /// A replayed check-in says it was made offline and when the pass was really scanned.
    func body(of entry: OutboxEntry, replay: Bool) -> [UInt8]? {
        guard let text = entry.body else { return nil }
        guard replay, entry.kind == "checkin",
              var checkIn = try? JSONDecoder().decode(CheckInBody.self, from: Data(text.utf8))
        else { return Array(text.utf8) }
        checkIn.offline = true
        checkIn.scannedAt = entry.scannedAt.map(Timestamp.init)
        return CanonicalJSON.encode(checkIn)
    }

    /// Records the outcome of an attempt in the outbox.
    @discardableResult
    func record(_ attempt: Attempt, for entry: OutboxEntry, into report: inout DrainReport) throws(ClientError) -> Bool {
        let now = clock.now()
        switch attempt {
        case .applied(let response):
            try store.completeEntry(id: entry.id)
            report.applied.append(entry)
            report.answers[entry.id] = response.body
            return true
        case .refused(let status, let code, let message):
            try store.killEntry(entry, status: status, code: code, message: message, now: now)
            report.deadLettered.append(entry)
            return true
        case .unauthorized(let message):
            try store.setDrainPaused(message)
            report.pausedForLogin = message
            return false
        case .retryable(let error):
            let wait = backoff.delay(afterAttempts: entry.attempts + 1)
            var deferred = entry
            deferred.attempts += 1
            deferred.lastError = error.description
            deferred.nextAttemptAt = now.addingTimeInterval(wait)
            try store.deferEntry(id: entry.id, error: error.description, nextAttemptAt: deferred.nextAttemptAt)
            report.deferred.append(deferred)
            if case .offline = error { report.offline = true }
            return false
        }
    }

    /// Replays every due entry, oldest first, stopping at the first failure that says the
    /// server is unreachable, failing or refusing our credentials.
    /// - Parameter ignoringBackoff: try entries whose backoff has not run out too (`outbox drain`).
    public func drain(ignoringBackoff: Bool = false) -> DrainReport {
        var report = DrainReport()
        guard let lock = DrainLock(path: lockPath) else {
            report.busy = true
            report.remaining = (try? store.outboxCount()) ?? 0
            return report
        }
        defer { lock.release() }
        do throws(ClientError) {
            if let reason = try store.drainPauseReason() {
                report.pausedForLogin = reason
            } else {
                for entry in try store.outboxEntries() {
                    if !ignoringBackoff && entry.nextAttemptAt > clock.now() {
                        report.waiting.append(entry)
                        continue
                    }
                    let attempt = send(entry, replay: true)
                    guard try record(attempt, for: entry, into: &report) else { break }
                }
            }
        } catch {
            report.failure = error.description
        }
        report.remaining = (try? store.outboxCount()) ?? 0
        return report
    }
}

/// An exclusive, non-blocking `flock` on a file in the state folder, so two processes never
/// drain the same outbox at once (the kernel drops it if the holder dies, even by kill -9).
final class DrainLock {
    private let descriptor: Int32

    init?(path: String) {
        let descriptor = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { return nil }
        guard flock(descriptor, LOCK_EX | LOCK_NB) == 0 else {
            close(descriptor)
            return nil
        }
        self.descriptor = descriptor
    }

    func release() {
        flock(descriptor, LOCK_UN)
        close(descriptor)
    }
}
