import Foundation
import GatePassCore
import HTTPServer

/// The answers of `POST /api/admin/push-test` that wait for their deliveries.
///
/// A wait holds no thread: its request's connection is suspended (the HTTP layer does that
/// while a reply is outstanding), and the deliveries are looked at by a timer every 50 ms
/// until all are delivered or the wait runs out. At most `capacity` wait at once, so the
/// route cannot be used to pile up open requests; `stop` answers every wait at once.
final class PushTestWaits: @unchecked Sendable {
    // @unchecked: `waits` and `stopped` are guarded by `lock`.
    private final class Wait {
        let targets: [PushTarget]
        let eventIds: [Int64]
        let deadline: ContinuousClock.Instant
        let reply: @Sendable (HTTPResponse) -> Void
        init(targets: [PushTarget], eventIds: [Int64], deadline: ContinuousClock.Instant,
             reply: @escaping @Sendable (HTTPResponse) -> Void) {
            self.targets = targets
            self.eventIds = eventIds
            self.deadline = deadline
            self.reply = reply
        }
    }

    private let store: ServerDatabase
    let capacity: Int
    private let lock = NSLock()
    private var reserved = 0
    private var waits: [ObjectIdentifier: Wait] = [:]
    private var polling = false
    private var stopped = false
    private let queue = DispatchQueue(label: "push-test-waits")

    init(store: ServerDatabase, capacity: Int) {
        self.store = store
        self.capacity = capacity
    }

    /// Claims a place for one wait; false when `capacity` are already waiting or stopping.
    func reserve() -> Bool {
        lock.lock()
        defer { lock.unlock() }
        guard !stopped, reserved < capacity else { return false }
        reserved += 1
        return true
    }

    /// Gives back a place claimed by `reserve` that will not be used.
    func release() {
        lock.lock()
        reserved -= 1
        lock.unlock()
    }

    /// Starts waiting for the deliveries of `eventIds` (in a place claimed by `reserve`).
    func wait(targets: [PushTarget], eventIds: [Int64], for duration: Duration,
              reply: @escaping @Sendable (HTTPResponse) -> Void) {
        let wait = Wait(targets: targets, eventIds: eventIds, deadline: .now + duration, reply: reply)
        lock.lock()
        if stopped {
            reserved -= 1
            lock.unlock()
            reply(Self.stoppingResponse)
            return
        }
        waits[ObjectIdentifier(wait)] = wait
        let startPolling = !polling
        polling = true
        lock.unlock()
        changes.signal()
        if startPolling { queue.async { self.poll() } }
    }

    /// Signalled after a wait starts or ends (what tests wait on).
    let changes = ChangeSignal()

    /// Waits currently held (for tests and diagnostics).
    var count: Int {
        lock.lock()
        defer { lock.unlock() }
        return waits.count
    }

    private func poll() {
        lock.lock()
        let current = Array(waits.values)
        lock.unlock()
        let now = ContinuousClock.now
        var finished: [(Wait, [String: String])] = []
        for wait in current {
            let statuses = (try? store.read { tx in
                try PushRegistry.deliveryStatuses(targets: wait.targets, eventIds: wait.eventIds, tx)
            }) ?? [:]
            if PushRegistry.allDelivered(statuses, targets: wait.targets) || now >= wait.deadline {
                finished.append((wait, statuses))
            }
        }
        lock.lock()
        var answer: [(Wait, [String: String])] = []
        for (wait, statuses) in finished where waits.removeValue(forKey: ObjectIdentifier(wait)) != nil {
            reserved -= 1
            answer.append((wait, statuses))
        }
        let again = !waits.isEmpty
        polling = again
        lock.unlock()
        if !answer.isEmpty { changes.signal() }
        for (wait, statuses) in answer {
            let outcomes = PushRegistry.outcomes(for: wait.targets, eventIds: wait.eventIds, statuses: statuses)
            wait.reply(JSONBody.response(Page(items: outcomes, nextCursor: nil)))
        }
        if again { queue.asyncAfter(deadline: .now() + .milliseconds(50)) { self.poll() } }
    }

    /// Answers every wait with 503 and refuses new ones (the server is stopping).
    func stop() {
        lock.lock()
        stopped = true
        let abandoned = Array(waits.values)
        waits.removeAll()
        reserved -= abandoned.count
        lock.unlock()
        changes.signal()
        for wait in abandoned { wait.reply(Self.stoppingResponse) }
    }

    static var stoppingResponse: HTTPResponse {
        APIError.serverStopping.response
    }
}
