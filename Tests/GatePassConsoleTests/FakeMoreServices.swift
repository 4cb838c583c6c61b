import Foundation
import GatePassCore
@testable import GatePassConsole

/// More services scripted by a test: each call answers what the test set and is recorded.
/// Retrying moves a dead letter back into the queue, as the client store does.
final class FakeMoreServices: MoreServices {
    static let ana = Profile(id: "u1", email: "ana@example.com", name: "Ana Pop", role: .owner, organizationId: "org-1",
                             canScanCheckpoint: false)
    static let token = "gpd_x7Hq2aB9secretPartOfTheToken0123456789"

    var profileResult: Result<ConsoleRead<Profile>, ConsoleError> =
        .success(ConsoleRead(value: FakeMoreServices.ana, updatedAt: Fixtures.now, fromCache: false))
    var server: String? = "http://gate.test"
    var deviceResult: Result<ConsoleDevice, ConsoleError> =
        .success(ConsoleDevice(token: FakeMoreServices.token, platform: "console", registeredWith: "http://gate.test"))
    var outbox = OutboxState()
    var outboxError: ConsoleError?
    var retryError: ConsoleError?
    var drainSummary = DrainSummary()
    var logOutResult: Result<[String], ConsoleError> = .success([])

    var siteResult: Result<ConsoleRead<Organization>, ConsoleError> =
        .success(ConsoleRead(value: Organization(id: "org-1", name: "Gate Site", timeZone: "Europe/Bucharest"),
                             updatedAt: Fixtures.now, fromCache: false))

    private(set) var calls: [String] = []

    func site() throws(ConsoleError) -> ConsoleRead<Organization> {
        calls.append("site")
        return try siteResult.get()
    }

    func profile() throws(ConsoleError) -> ConsoleRead<Profile> {
        calls.append("profile")
        return try profileResult.get()
    }

    func sessionServer() -> String? { server }

    func device() throws(ConsoleError) -> ConsoleDevice {
        calls.append("device")
        return try deviceResult.get()
    }

    func outboxState() throws(ConsoleError) -> OutboxState {
        calls.append("outboxState")
        if let outboxError { throw outboxError }
        return outbox
    }

    func retryOutboxEntry(id: Int64) throws(ConsoleError) -> Bool {
        calls.append("retry \(id)")
        if let retryError { throw retryError }
        if let index = outbox.queued.firstIndex(where: { $0.id == id }) {
            outbox.queued[index].nextAttemptAt = Fixtures.now
            return true
        }
        guard let index = outbox.deadLetters.firstIndex(where: { $0.id == id }) else { return false }
        let dead = outbox.deadLetters.remove(at: index)
        outbox.queued.insert(QueuedEntry(id: dead.id, kind: dead.kind, request: dead.request, attempts: dead.attempts,
                                         lastError: "\(dead.code): \(dead.message)", nextAttemptAt: Fixtures.now,
                                         createdAt: dead.createdAt), at: 0)
        return true
    }

    func drainOutboxNow() -> DrainSummary {
        calls.append("drain")
        return drainSummary
    }

    func logOut() throws(ConsoleError) -> [String] {
        calls.append("logOut")
        return try logOutResult.get()
    }
}

extension Fixtures {
    static func queued(_ id: Int64, kind: String = "approve", attempts: Int = 3, lastError: String? = "server unreachable",
                       dueIn seconds: TimeInterval = 40) -> QueuedEntry {
        QueuedEntry(id: id, kind: kind, request: "POST /api/visitors/v\(id)/approve-scan", attempts: attempts,
                    lastError: lastError, nextAttemptAt: now.addingTimeInterval(seconds), createdAt: now.addingTimeInterval(-600))
    }

    static func dead(_ id: Int64, kind: String = "checkin", message: String = "the visitor is already checked in") -> DeadEntry {
        DeadEntry(id: id, kind: kind, request: "POST /api/visitor-scanner/checkin", attempts: 1, status: 409, code: "CONFLICT",
                  message: message, createdAt: now.addingTimeInterval(-900), deadAt: now.addingTimeInterval(-800))
    }
}
