import Foundation
import GatePassCore
import HTTPServer

/// Fans the event log out to the open streams, on one thread.
///
/// The log in the database is the source of truth: after each commit (and every
/// `pollInterval`, for writers in other processes such as `gatepass push-test --db`) the hub
/// reads the events it has not seen once, encodes each frame once, and queues it on every
/// stream whose filter admits it. A stream that connected with an older `Last-Event-ID`
/// first catches up from the log. The same thread pings idle streams, records push
/// deliveries the streams handed to their sockets, and fails deliveries left pending too long.
final class EventHub: @unchecked Sendable {
    struct Settings: Sendable {
        var pingInterval: Duration
        var pollInterval: Duration = .milliseconds(250)
        var pushFailAfterSeconds: Int
    }

    private let store: ServerDatabase
    private let clock: any WallClock
    private let settings: Settings
    private let logSink: any LogSink

    // `condition` guards `signaled`, `running` and `streams`.
    private let condition = NSCondition()
    private var signaled = false
    private var running = false
    private var mustRevalidate = false
    private var streams: [ObjectIdentifier: EventStream] = [:]
    private let stopped = DispatchSemaphore(value: 0)

    /// Hub thread only: the last event id read from the log.
    private var head: Int64 = 0
    private var lastFailSweep = ContinuousClock.now
    private var lastRevalidation = ContinuousClock.now

    init(store: ServerDatabase, clock: any WallClock, settings: Settings, logSink: any LogSink) {
        self.store = store
        self.clock = clock
        self.settings = settings
        self.logSink = logSink
    }

    var streamCount: Int { condition.withLock { streams.count } }
    /// Signalled after a stream is added or removed and after delivery records are committed
    /// (what tests wait on: "stream closed", "delivery marked").
    let changes = ChangeSignal()

    func start() throws {
        head = try store.read { tx in try tx.events.lastEventId() }
        condition.withLock { running = true }
        let thread = Thread { [self] in
            run()
            stopped.signal()
        }
        thread.name = "event-hub"
        thread.start()
    }

    /// Ends every stream and the hub thread.
    func stop() {
        let open: [EventStream]? = condition.withLock {
            guard running else { return nil }
            running = false
            condition.signal()
            return Array(streams.values)
        }
        guard let open else { return }
        stopped.wait()
        for stream in open { stream.end() }
    }

    /// A write committed: there may be new events.
    func committed() {
        condition.withLock {
            signaled = true
            condition.signal()
        }
    }

    /// A logout or a disable committed: streams of ended sessions must end now, not at their next connect.
    func sessionsEnded() {
        condition.withLock {
            mustRevalidate = true
            signaled = true
            condition.signal()
        }
    }

    /// Users whose rights changed: their open streams end now; their clients reconnect and
    /// are filtered under the new rights.
    func endStreams(ofUsers userIds: Set<String>) {
        let affected = condition.withLock { streams.values.filter { userIds.contains($0.filter.userId) } }
        for stream in affected { stream.end() }
    }

    // MARK: - Subscribing

    /// Opens a stream for `filter`. Without `lastEventId` it starts at "now"; with one it
    /// replays what came after, preceded by `stream.gap` when part of that was purged (or
    /// when the id is from the future, e.g. a restored database).
    func subscribe(filter: EventStreamFilter, lastEventId: Int64?, _ tx: any Transaction) throws -> EventStream {
        let newest = try tx.events.lastEventId()
        let purgedThrough = try tx.events.purgedThrough()
        // `retry:` tells EventSource clients how soon to reconnect; it dispatches no event.
        var preamble = Array("retry: 3000\n\n".utf8)
        var cursor = newest
        if let lastEventId {
            if lastEventId < purgedThrough || lastEventId > newest {
                let gap = StreamGapData(oldestKeptId: purgedThrough + 1)
                preamble += EventStream.frame(id: nil, kind: EventKind.streamGap.rawValue, data: EventLog.encode(gap))
                cursor = lastEventId > newest ? newest : purgedThrough
            } else {
                cursor = lastEventId
            }
        }
        let stream = EventStream(filter: filter, cursor: cursor, preamble: preamble) { [weak self] stream in
            self?.remove(stream)
        }
        condition.withLock {
            streams[ObjectIdentifier(stream)] = stream
            // Wake the hub so that a replay starts at once.
            signaled = true
            condition.signal()
        }
        changes.signal()
        return stream
    }

    private func remove(_ stream: EventStream) {
        condition.withLock { _ = streams.removeValue(forKey: ObjectIdentifier(stream)) }
        changes.signal()
    }

    // MARK: - The hub thread

    private func run() {
        while true {
            let open: [EventStream]? = condition.withLock {
                let deadline = Date().addingTimeInterval(settings.pollInterval.seconds)
                while running && !signaled {
                    if !condition.wait(until: deadline) { break }
                }
                signaled = false
                return running ? Array(streams.values) : nil
            }
            guard let open else { return }
            do {
                try endStreamsOfEndedSessions(open)
                try fanOut(to: open)
                try recordDeliveries(from: open)
                try failOverdueDeliveries()
            } catch {
                logSink.log("event hub: \(error)")
            }
            for stream in open where stream.idle(for: settings.pingInterval) {
                stream.enqueue([EventStream.Frame(bytes: EventStream.ping, deliveredEventId: nil)])
            }
        }
    }

    private static let pageSize = 1_000

    private func events(after id: Int64, through last: Int64? = nil, _ tx: any Transaction) throws -> [StoredEvent] {
        // A row this build cannot read (an unknown kind a newer server wrote, a damaged value)
        // is logged and never sent, but still moves the cursors: the hub serves every stream,
        // and one bad row must not stop them all. Requests that read it (notification lists)
        // fail with 500 instead.
        try tx.events.events(after: id, through: last, limit: Self.pageSize).map { entry in
            switch entry {
            case .event(let event):
                return event
            case .unreadable(let id, let error):
                logSink.log("event hub: event \(id) is not understood and is skipped: \(error)")
                return StoredEvent.placeholder(id: id)
            }
        }
    }

    /// New events to every stream; streams that are behind catch up from the log first.
    private func fanOut(to open: [EventStream]) throws {
        var more = true
        while more {
            let batchStart = head
            let batch = try store.read { tx in try events(after: head, tx) }
            more = batch.count == Self.pageSize
            if let last = batch.last { head = last.id }
            let frames = batch.map { event in
                (event, EventStream.frame(id: event.id, kind: event.kind.rawValue, data: event.data))
            }
            var wakes: [@Sendable () -> Void] = []
            wakes.reserveCapacity(open.count)
            for stream in open where !stream.isOver {
                if stream.cursor < batchStart { try catchUp(stream, through: batchStart) }
                let admitted = frames.filter { $0.0.id > stream.cursor && !$0.0.isPlaceholder && stream.filter.admits($0.0) }
                if !admitted.isEmpty, let wake = stream.enqueueQuietly(admitted.map { Self.frame($0.1, $0.0, stream) }) {
                    wakes.append(wake)
                }
                stream.cursor = max(stream.cursor, head)
            }
            for wake in wakes { wake() }
        }
    }

    private func catchUp(_ stream: EventStream, through last: Int64) throws {
        while stream.cursor < last, !stream.isOver {
            let page = try store.read { tx in try events(after: stream.cursor, through: last, tx) }
            guard let newest = page.last else {
                stream.cursor = last
                return
            }
            let admitted = page.filter { !$0.isPlaceholder && stream.filter.admits($0) }
            let queued = stream.enqueue(admitted.map {
                Self.frame(EventStream.frame(id: $0.id, kind: $0.kind.rawValue, data: $0.data), $0, stream)
            })
            stream.cursor = newest.id
            if !queued { return }
        }
    }

    private static func frame(_ bytes: [UInt8], _ event: StoredEvent, _ stream: EventStream) -> EventStream.Frame {
        EventStream.Frame(bytes: bytes, deliveredEventId: stream.filter.deviceToken == nil ? nil : event.id)
    }

    /// Marks deliveries whose events a stream with that device token handed to its socket.
    private func recordDeliveries(from open: [EventStream]) throws {
        var marks: [(token: String, eventId: Int64)] = []
        for stream in open {
            guard let token = stream.filter.deviceToken else { continue }
            marks += stream.takeDelivered().map { (token, $0) }
        }
        guard !marks.isEmpty else { return }
        let done = marks
        let now = clock.now()
        store.writeAsync({ tx in
            for mark in done {
                try tx.push.markDelivered(token: mark.token, eventId: mark.eventId, now: now)
            }
        }) { [logSink, changes] result in
            if case .failure(let error) = result { logSink.log("recording push deliveries failed: \(error)") }
            changes.signal()
        }
    }

    /// A stream lives no longer than its session: on every tick of the hub (at most
    /// `pollInterval` apart, on the injected clock) streams whose session has expired are
    /// ended; after a logout (at once) and every 30 s, streams whose session was revoked (by
    /// this process or another) are ended. Their clients reconnect and get 401.
    private func endStreamsOfEndedSessions(_ open: [EventStream]) throws {
        let now = clock.now()
        for stream in open where !stream.isOver && stream.filter.sessionExpiresAt <= now { stream.end() }
        let asked = condition.withLock {
            defer { mustRevalidate = false }
            return mustRevalidate
        }
        guard asked || ContinuousClock.now - lastRevalidation >= .seconds(30), !open.isEmpty else { return }
        lastRevalidation = .now
        let sessions = Set(open.map(\.filter.sessionId))
        let alive = try store.read { tx in try tx.sessions.liveSessions(among: sessions, now: now) }
        for stream in open where !alive.contains(stream.filter.sessionId) { stream.end() }
    }

    /// Every few seconds: pending deliveries older than the configured time become failed.
    /// Reads first, so an idle server does not commit (and sync) for nothing.
    private func failOverdueDeliveries() throws {
        guard ContinuousClock.now - lastFailSweep >= .seconds(2) else { return }
        lastFailSweep = .now
        let cutoff = clock.now().addingTimeInterval(-TimeInterval(settings.pushFailAfterSeconds))
        let overdue = try store.read { tx in try tx.push.hasPendingDeliveries(createdBefore: cutoff) }
        guard overdue else { return }
        let now = clock.now()
        // One server of those sharing the database marks them (the update is conditional on
        // `pending`, so a second one would change nothing, but need not run).
        store.runExclusively(.pushFailures) {
            store.writeAsync({ tx in
                try tx.push.failPendingDeliveries(createdBefore: cutoff, now: now)
            }) { [logSink, changes] result in
                if case .failure(let error) = result { logSink.log("failing overdue push deliveries failed: \(error)") }
                changes.signal()
            }
        }
    }
}

extension StoredEvent {
    /// Stands for a row this build cannot read: moves cursors, is never sent.
    static func placeholder(id: Int64) -> StoredEvent {
        StoredEvent(id: id, kind: .streamGap, audience: EventAudience(organizationId: ""), data: "", createdAt: Date())
    }

    var isPlaceholder: Bool { kind == .streamGap }
}

extension Duration {
    var seconds: Double { Double(components.seconds) + Double(components.attoseconds) / 1e18 }
}
