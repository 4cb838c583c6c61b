import Foundation
import GatePassClient
import GatePassConsole
import GatePassCore

// The More tab's calls (`MoreServices`, declared in GatePassConsole) over the client core.


extension ClientCoreServices: MoreServices {
    /// The meta key ClientCore writes "SERVER USERID" under after registering the push token
    /// (`ClientDatabase.deviceRegistrationKey`, which GatePassClient keeps internal).
    static let deviceRegistrationMetaKey = "device_registration"

    public func profile() throws(ConsoleError) -> ConsoleRead<Profile> {
        do {
            let read = try core.whoami()
            return ConsoleRead(value: read.value, updatedAt: read.updatedAt, fromCache: read.fromCache)
        } catch {
            throw Self.consoleError(error, retryAfter: nil)
        }
    }

    public func sessionServer() -> String? { (try? core.session())?.server }

    public func device() throws(ConsoleError) -> ConsoleDevice {
        do {
            let token = try core.store.deviceToken()
            let registration = try core.store.meta(Self.deviceRegistrationMetaKey)
            let session = try core.session()
            // Registered for this session only when the server and user match the session's.
            var registeredWith: String?
            if let registration, let session {
                let parts = registration.split(separator: " ", maxSplits: 1).map(String.init)
                if parts.count == 2, parts[0] == session.server, parts[1] == session.user.id { registeredWith = parts[0] }
            }
            return ConsoleDevice(token: token, platform: core.platform, registeredWith: registeredWith)
        } catch {
            throw Self.consoleError(error, retryAfter: nil)
        }
    }

    public func outboxState() throws(ConsoleError) -> OutboxState {
        do {
            let queued = try core.store.outboxEntries().map { entry in
                QueuedEntry(id: entry.id, kind: entry.kind, request: Self.request(entry), attempts: entry.attempts,
                            lastError: entry.lastError, nextAttemptAt: entry.nextAttemptAt, createdAt: entry.createdAt)
            }
            let dead = try core.store.deadLetters().map { letter in
                DeadEntry(id: letter.entry.id, kind: letter.entry.kind, request: Self.request(letter.entry),
                          attempts: letter.entry.attempts, status: letter.status, code: letter.errorCode,
                          message: letter.errorMessage, createdAt: letter.entry.createdAt, deadAt: letter.deadAt)
            }
            return OutboxState(queued: queued, deadLetters: dead, pausedForLogin: try core.store.drainPauseReason())
        } catch {
            throw Self.consoleError(error, retryAfter: nil)
        }
    }

    /// "POST /api/visitors/ID/approve-scan": the path says what the entry does; the server
    /// part is the session's anyway.
    static func request(_ entry: OutboxEntry) -> String {
        let path = URLComponents(string: entry.url)?.path ?? entry.url
        return "\(entry.method) \(path.isEmpty ? entry.url : path)"
    }

    public func retryOutboxEntry(id: Int64) throws(ConsoleError) -> Bool {
        do {
            return try core.store.retry(id: id, now: clock.now())
        } catch {
            throw Self.consoleError(error, retryAfter: nil)
        }
    }

    public func drainOutboxNow() -> DrainSummary {
        let report = core.drainer.drain(ignoringBackoff: true)
        return DrainSummary(sent: report.applied.count, deadLettered: report.deadLettered.count, remaining: report.remaining,
                            offline: report.offline, pausedForLogin: report.pausedForLogin, busy: report.busy,
                            failure: report.failure)
    }

    public func logOut() throws(ConsoleError) -> [String] {
        do {
            guard try core.session() != nil else { return [] }
            return try core.logout()
        } catch {
            throw Self.consoleError(error, retryAfter: nil)
        }
    }
}
