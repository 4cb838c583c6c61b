import Foundation
import GatePassCore
import Synchronization

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
    /// Entries due but not tried because one before them that they keep their order with is
    /// waiting (an earlier entry of the same pass, or any earlier entry for a non-check-in).
    /// They go with it, so they set no deadline of their own.
    public var heldBack: [OutboxEntry] = []
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
/// 5xx, timeout, no network → attempts + 1 and exponential backoff with full jitter; 429 →
/// the same, but never sooner than its `Retry-After`.
///
/// Pipelined: check-ins of different passes do not depend on each other, so a run of them is
/// replayed over several lanes at once, each with its own HTTP handle; every entry of one pass
/// goes through one lane, in order. Anything else (a check-out, a decision, a walk-in) is sent
/// alone, after everything before it and before everything after it. The first due entry is
/// sent alone too, so an unreachable server costs one attempt, as with a sequential drain.
/// Any failure that stops the drain stops every lane (each finishes the request it has in flight).
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
    /// How many check-ins may be in flight at once during a replay.
    let laneCount: Int
    /// `transport` first, then its separate handles, made on first need and kept, so their
    /// connections stay open from one drain to the next.
    private let lanes: Locked<[any HTTPTransport]>
    /// Held while a scanner token is renewed: lanes refused at the same moment make one new token.
    private let renewal = NSLock()

    /// - Parameter lanes: how many check-ins of different passes may be in flight at once
    ///   (1 replays strictly one entry at a time).
    public init(store: ClientDatabase, transport: any HTTPTransport, clock: any WallClock, backoff: Backoff = Backoff(),
                directory: StateDirectory, lanes: Int = OutboxDrainer.defaultLanes) {
        precondition(lanes >= 1, "a drain needs at least one lane")
        self.store = store
        self.transport = transport
        self.clock = clock
        self.backoff = backoff
        lockPath = directory.path + "/drain.lock"
        laneCount = lanes
        self.lanes = Locked([transport])
    }

    /// Enough to keep the server's group commit busy (it batches concurrent check-ins into one
    /// fsync), few enough that a kiosk's replay leaves the server's threads to other gates.
    public static let defaultLanes = 8

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
        send(entry, replay: replay, over: transport)
    }

    private func send(_ entry: OutboxEntry, replay: Bool, over transport: any HTTPTransport) -> Attempt {
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
            case .offline, .transient, .rateLimited, .local: return .retryable(error)
            case .decoding(let detail): return .retryable(.decoding(detail))
            }
        }
    }

    private func renewScannerToken(_ session: Session, api: APIClient) throws(ClientError) -> Session {
        renewal.lock()
        defer { renewal.unlock() }
        // Another lane may have renewed it while this one waited: use that token.
        if let current = try store.session(), let scanner = current.scanner,
           scanner.scannerToken != session.scanner?.scannerToken {
            return current
        }
        var updated = session
        updated.scanner = try api.scannerToken(token: session.token, checkpointId: session.scanner?.checkpoint.id,
                                               previous: try store.scannerTokenToContinue(session))
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
        case .refused(let status, let code, let message) where Self.isDeliveredRefusal(entry, status: status, code: code):
            // api.md "Offline passes": a scan refused offline is replayed so the history holds
            // it; the server's INVALID / NOT_FOUND is its answer, not a failure of the replay.
            try store.completeEntry(id: entry.id)
            report.applied.append(entry)
            report.answers[entry.id] = CanonicalJSON.encode(APIErrorBody(code: code, message: message))
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
            var wait = backoff.delay(afterAttempts: entry.attempts + 1)
            // The server said how long: never sooner (the backoff may ask for longer).
            if case .rateLimited(let seconds?, _) = error { wait = max(wait, TimeInterval(seconds)) }
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

    /// Whether a refusal is the answer an offline check-in replay expects: a scan the kiosk
    /// already refused offline (its body has `offlineDecision`) answered 400 (the text is no
    /// pass, recorded INVALID) or 404 `NOT_FOUND` (an unknown pass, recorded NOT_FOUND).
    static func isDeliveredRefusal(_ entry: OutboxEntry, status: Int, code: String) -> Bool {
        guard entry.kind == "checkin", status == 400 || (status == 404 && code == "NOT_FOUND"), let text = entry.body,
              let body = try? JSONDecoder().decode(CheckInBody.self, from: Data(text.utf8))
        else { return false }
        return body.offlineDecision != nil
    }

    /// Replays every due entry, oldest first per pass, stopping at the first failure that
    /// says the server is unreachable, failing or refusing our credentials.
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
                let plan = ReplayPlan(try store.outboxEntries(), now: clock.now(), ignoringBackoff: ignoringBackoff)
                report.waiting = plan.waiting
                report.heldBack = plan.heldBack
                try replay(plan.due, into: &report)
            }
        } catch {
            report.failure = error.description
        }
        report.applied.sort { $0.id < $1.id }
        report.deadLettered.sort { $0.id < $1.id }
        report.deferred.sort { $0.id < $1.id }
        report.remaining = (try? store.outboxCount()) ?? 0
        return report
    }

    /// Sends `due` (in the outbox's order): the first entry and every non-check-in alone, each
    /// run of check-ins between them over the lanes.
    private func replay(_ due: [ReplayPlan.Due], into report: inout DrainReport) throws(ClientError) {
        var index = due.startIndex
        while index < due.endIndex {
            guard index > due.startIndex, case .pass = due[index].order else {
                guard try record(send(due[index].entry, replay: true), for: due[index].entry, into: &report) else { return }
                index += 1
                continue
            }
            var end = index
            while end < due.endIndex, case .pass = due[end].order { end += 1 }
            guard replayConcurrently(due[index..<end], into: &report) else { return }
            index = end
        }
    }

    /// Replays a run of check-ins, each pass's entries in order on one lane; returns false when
    /// a lane stopped the drain.
    private func replayConcurrently(_ run: ArraySlice<ReplayPlan.Due>, into report: inout DrainReport) -> Bool {
        // Passes are dealt to lanes in the order they first appear, so lanes get even shares.
        var laneOfPass: [ReplayOrder: Int] = [:]
        var work: [[OutboxEntry]] = []
        for item in run {
            let lane: Int
            if let known = laneOfPass[item.order] {
                lane = known
            } else {
                lane = laneOfPass.count % laneCount
                laneOfPass[item.order] = lane
            }
            if lane == work.count { work.append([]) }
            work[lane].append(item.entry)
        }
        let handles = handles(count: work.count)
        let lanes = LaneOutcomes()
        let group = DispatchGroup()
        for (entries, handle) in zip(work, handles) {
            group.enter()
            // A thread per lane rather than Dispatch: each blocks on the network, and Dispatch's
            // pool is sized for the CPU's cores.
            let thread = Thread { [self] in
                var mine = DrainReport()
                for entry in entries {
                    if lanes.stopped.load(ordering: .acquiring) { break }
                    do throws(ClientError) {
                        guard try record(send(entry, replay: true, over: handle), for: entry, into: &mine) else {
                            lanes.stopped.store(true, ordering: .releasing)
                            break
                        }
                    } catch {
                        mine.failure = error.description
                        lanes.stopped.store(true, ordering: .releasing)
                        break
                    }
                }
                lanes.reports.withLock { $0.append(mine) }
                group.leave()
            }
            thread.name = "gatepass-replay"
            thread.start()
        }
        group.wait()
        for lane in lanes.reports.withLock({ $0 }) { report.absorb(lane) }
        return !lanes.stopped.load(ordering: .acquiring)
    }

    /// The first `count` lane handles, making the missing ones.
    private func handles(count: Int) -> [any HTTPTransport] {
        lanes.withLock { lanes in
            while lanes.count < count { lanes.append(transport.separateHandle()) }
            return Array(lanes.prefix(count))
        }
    }
}

/// What the lanes of one run share: whether one stopped the drain, and what each did.
private final class LaneOutcomes: Sendable {
    let stopped = Atomic<Bool>(false)
    let reports = Locked<[DrainReport]>([])
}

extension DrainReport {
    /// Adds what one lane of a pipelined replay did.
    mutating func absorb(_ lane: DrainReport) {
        applied += lane.applied
        answers.merge(lane.answers) { first, _ in first }
        deadLettered += lane.deadLettered
        deferred += lane.deferred
        offline = offline || lane.offline
        pausedForLogin = pausedForLogin ?? lane.pausedForLogin
        failure = failure ?? lane.failure
    }
}

/// Which entries keep their order among themselves during a pipelined replay.
enum ReplayOrder: Hashable, Sendable {
    /// A check-in, ordered against the other entries of its pass (by short id; text that names
    /// no pass is ordered against the same text).
    case pass(String)
    /// Anything else, ordered against every entry.
    case everything

    init(_ entry: OutboxEntry) {
        guard entry.kind == "checkin", let text = entry.body,
              let body = try? JSONDecoder().decode(CheckInBody.self, from: Data(text.utf8))
        else {
            self = .everything
            return
        }
        // The parse the server's check-in and the offline decision share.
        if let pass = try? QRPayload.reference(from: body.shortId) {
            self = .pass(pass.shortId.rawValue)
        } else {
            self = .pass("text:" + body.shortId)
        }
    }
}

/// The outbox sorted for one drain: what is due, and what waits (its backoff, or an entry it
/// keeps its order with).
struct ReplayPlan {
    struct Due {
        var entry: OutboxEntry
        var order: ReplayOrder
    }

    var due: [Due] = []
    var waiting: [OutboxEntry] = []
    var heldBack: [OutboxEntry] = []

    init(_ entries: [OutboxEntry], now: Date, ignoringBackoff: Bool) {
        var blockedPasses: Set<ReplayOrder> = []
        // Set once an entry that everything after it follows cannot go now.
        var everythingBlocked = false
        for entry in entries {
            let order = ReplayOrder(entry)
            let isDue = ignoringBackoff || entry.nextAttemptAt <= now
            let blocked = everythingBlocked || (order == .everything ? !waiting.isEmpty || !heldBack.isEmpty
                                                                       : blockedPasses.contains(order))
            if isDue && !blocked {
                due.append(Due(entry: entry, order: order))
                continue
            }
            if isDue { heldBack.append(entry) } else { waiting.append(entry) }
            if order == .everything { everythingBlocked = true } else { blockedPasses.insert(order) }
        }
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
