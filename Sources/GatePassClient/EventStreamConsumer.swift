import Foundation
import GatePassAPI
import GatePassCore

/// Follows `GET /api/events` (api.md "Events (server-sent events)") on its own thread and
/// hands each event to `onEvent` exactly once, across dropped connections and server
/// restarts: it resumes with `Last-Event-ID`, drops events at or below the last id it
/// delivered, and keeps that id in a `LastEventIDStore` so a new process resumes too.
///
/// ```swift
/// let consumer = EventStreamConsumer(
///     configuration: .init(server: session.server, deviceToken: try store.deviceToken()),
///     transport: transport.separateHandle(),
///     token: { try? store.session()?.token }, lastEventIDs: store,
///     onStatus: { status in ui.show(status) }, onEvent: { event in ui.apply(event) })
/// consumer.start()
/// …
/// consumer.stop()
/// ```
///
/// A dropped connection (an error, the server closing, no byte for `idleTimeout`, a status
/// other than 200) is retried with `Backoff`, never sooner than the server's `retry:` hint.
/// 401 and 403 end it: the session is over and only a new login helps.
///
/// Thread-safe: the mutable state is behind a lock (`Locked`, a pthread mutex ThreadSanitizer
/// sees: `Synchronization.Mutex` is a raw futex to it, and `stop` against the stream's
/// `isStopping` was reported as a race in a CI run); callbacks run on the consumer's thread,
/// one at a time.
public final class EventStreamConsumer: Sendable {
    public struct Configuration: Sendable {
        /// The server's base URL, e.g. `https://gate.example.com`.
        public var server: String
        /// Sent as `X-Device-Token`, so the server can tell this device's stream from others.
        public var deviceToken: String?
        /// No byte for this long ends the connection; the server pings at least every 15 s.
        public var idleTimeout: Duration
        public var backoff: Backoff
        public var maxEventBytes: Int

        public init(server: String, deviceToken: String? = nil, idleTimeout: Duration = .seconds(45),
                    backoff: Backoff = Backoff(base: 1, cap: 60),
                    maxEventBytes: Int = ServerSentEventParser.defaultMaxEventBytes) {
            self.server = server
            self.deviceToken = deviceToken
            self.idleTimeout = idleTimeout
            self.backoff = backoff
            self.maxEventBytes = maxEventBytes
        }
    }

    /// What a UI shows: "live" while `connected`, "offline" otherwise.
    public enum Status: Sendable, Equatable {
        case connecting
        /// The server answered 200 with an event stream.
        case connected
        /// The connection failed or ended; the next attempt is in `retryIn` seconds.
        case waiting(retryIn: TimeInterval, because: ClientError)
        /// Final. `reason` is nil after `stop()`, else why it gave up (the session ended).
        case stopped(reason: ClientError?)
    }

    private enum Phase { case idle, running, stopping, finished }

    private struct State {
        var phase = Phase.idle
        var lastDeliveredID: Int64?
    }

    private let configuration: Configuration
    private let server: String
    private let token: @Sendable () -> String?
    private let lastEventIDs: (any LastEventIDStore)?
    private let onStatus: @Sendable (Status) -> Void
    private let onEvent: @Sendable (ServerEvent) -> Void
    /// The stream's own handle (a transport may serialise its transfers, and a stream holds
    /// one for hours): give it one no other caller uses, e.g. `separateHandle()`.
    private let transport: any HTTPTransport
    private let state = Locked(State())
    /// Signalled by `stop()` to cut a wait between connections short.
    private let wakeUp = DispatchSemaphore(value: 0)
    /// Signalled once when the thread ends.
    private let finished = DispatchSemaphore(value: 0)
    /// Marks the consumer's own thread, so `stop()` called from a callback does not wait for itself.
    private let threadMark = UUID().uuidString
    private static let threadMarkKey = "gatepass.events.consumer"

    /// - Parameters:
    ///   - transport: the handle the stream runs on, used by nothing else (the request
    ///     timeout does not apply to a stream; the connect timeout and CA file do).
    ///   - token: the bearer token, asked on every connect (it changes when the user logs in
    ///     again); nil ends the consumer with `.unauthorized`.
    ///   - lastEventIDs: where the last delivered id is kept across processes; nil keeps it
    ///     in memory only.
    ///   - onStatus: called on every change of connection state.
    ///   - onEvent: called with each new event, in order; a `stream.gap` (no id) means the
    ///     caller must reload its lists.
    public init(configuration: Configuration, transport: any HTTPTransport, token: @escaping @Sendable () -> String?,
                lastEventIDs: (any LastEventIDStore)?,
                onStatus: @escaping @Sendable (Status) -> Void = { _ in },
                onEvent: @escaping @Sendable (ServerEvent) -> Void) {
        self.configuration = configuration
        var server = configuration.server
        while server.hasSuffix("/") { server.removeLast() }
        self.server = server
        self.token = token
        self.lastEventIDs = lastEventIDs
        self.onStatus = onStatus
        self.onEvent = onEvent
        self.transport = transport
    }

    /// The id of the last event handed to `onEvent` (or loaded at start).
    public var lastDeliveredID: Int64? { state.withLock { $0.lastDeliveredID } }

    /// Starts the consumer's thread. A consumer runs once: after `stop()`, make a new one.
    public func start() {
        let starting = state.withLock { state in
            guard state.phase == .idle else { return false }
            state.phase = .running
            return true
        }
        guard starting else { return }
        let thread = Thread { [self] in
            Thread.current.threadDictionary[Self.threadMarkKey] = threadMark
            run()
            state.withLock { $0.phase = .finished }
            finished.signal()
        }
        thread.name = "gatepass-events"
        thread.start()
    }

    /// Ends the stream and returns once the thread has finished (within about a second: an
    /// open transfer notices at libcurl's next progress call). No callback runs after it
    /// returns, except when called from a callback, where it returns at once.
    public func stop() {
        let wasStarted = state.withLock { state in
            switch state.phase {
            case .idle:
                state.phase = .finished
                return false
            case .running:
                state.phase = .stopping
                return true
            case .stopping, .finished:
                return true
            }
        }
        guard wasStarted else { return }
        wakeUp.signal()
        guard Thread.current.threadDictionary[Self.threadMarkKey] as? String != threadMark else { return }
        finished.wait()
        finished.signal() // for any other caller of stop()
    }

    private var isStopping: Bool { state.withLock { $0.phase != .running } }

    // MARK: - The consumer's thread

    private enum Outcome {
        /// The connection ended and another should follow; `wasLive` when it delivered
        /// events or pings, which proves the server works and resets the backoff.
        case dropped(ClientError, wasLive: Bool)
        case sessionEnded(ClientError)
        case stopRequested
    }

    private func run() {
        // Unreadable state starts at "now" rather than not at all: a live view beats a stopped one.
        let stored = (try? lastEventIDs?.lastEventID(server: server)) ?? nil
        state.withLock { $0.lastDeliveredID = stored }
        var failures = 0
        var retryHint: TimeInterval = 0
        while !isStopping {
            onStatus(.connecting)
            switch connectOnce(retryHint: &retryHint) {
            case .stopRequested:
                continue // the loop condition ends it
            case .sessionEnded(let error):
                onStatus(.stopped(reason: error))
                return
            case .dropped(let error, let wasLive):
                failures = wasLive ? 1 : failures + 1
                let delay = max(retryHint, configuration.backoff.delay(afterAttempts: failures))
                onStatus(.waiting(retryIn: delay, because: error))
                // A stop() during the wait signals the semaphore; the loop condition then ends it.
                _ = wakeUp.wait(timeout: .now() + delay)
            }
        }
        onStatus(.stopped(reason: nil))
    }

    private func connectOnce(retryHint: inout TimeInterval) -> Outcome {
        guard let token = token() else { return .sessionEnded(.unauthorized("no one is logged in on this device")) }
        var headers: [(name: String, value: String)] = [("Authorization", "Bearer \(token)"), ("Accept", "text/event-stream")]
        if let deviceToken = configuration.deviceToken { headers.append(("X-Device-Token", deviceToken)) }
        if let lastID = lastDeliveredID { headers.append(("Last-Event-ID", String(lastID))) }
        let request = HTTPRequest(method: Endpoint.eventsStream.method.rawValue, url: server + Endpoint.eventsStream.path(),
                                        headers: headers)

        var parser = ServerSentEventParser(maxEventBytes: configuration.maxEventBytes)
        // The callbacks below escape, so they cannot capture the inout parameter itself.
        var hint = retryHint
        defer { retryHint = hint }
        var status = 0
        var contentType = ""
        var wasLive = false
        do {
            try transport.stream(request, idleTimeout: configuration.idleTimeout, shouldStop: { [self] in isStopping },
                               onResponse: { [self] code, responseHeaders in
                status = code
                contentType = responseHeaders["content-type"] ?? ""
                guard code == 200, contentType.hasPrefix("text/event-stream") else { return false }
                onStatus(.connected)
                return true
            }, onData: { [self] bytes in
                let commentsBefore = parser.commentsSeen
                let events = parser.feed(bytes)
                if let milliseconds = parser.retryMilliseconds { hint = Double(milliseconds) / 1000 }
                if !events.isEmpty || parser.commentsSeen > commentsBefore { wasLive = true }
                for event in events {
                    guard !isStopping else { return false }
                    deliver(event)
                }
                return !isStopping
            })
        } catch {
            return isStopping ? .stopRequested : .dropped(ClientError.from(error), wasLive: wasLive)
        }
        if isStopping { return .stopRequested }
        switch status {
        case 200 where contentType.hasPrefix("text/event-stream"):
            return .dropped(.transient(status: nil, message: "the server closed the event stream"), wasLive: wasLive)
        case 200:
            return .dropped(.decoding("\(Endpoint.eventsStream.pathPattern) answered \(contentType.isEmpty ? "no content type" : contentType), not text/event-stream"),
                            wasLive: false)
        case 401:
            return .sessionEnded(.unauthorized("the server ended this session; log in again"))
        case 403:
            return .sessionEnded(.permanent(status: 403, code: "FORBIDDEN", message: "this login may not follow events"))
        default:
            return .dropped(.transient(status: status, message: "\(Endpoint.eventsStream.pathPattern) answered \(status)"), wasLive: false)
        }
    }

    /// Hands `event` over unless it was delivered before (a replay after a reconnect), then
    /// records its id. Delivery comes first: a crash in between shows the event twice
    /// rather than never.
    private func deliver(_ event: ServerEvent) {
        if let id = event.id, let last = lastDeliveredID, id <= last { return }
        onEvent(event)
        if event.kind == .streamGap {
            // What follows a gap is new whatever its id: after a restored (or replaced)
            // database the server's ids may be lower than the last one seen here.
            state.withLock { $0.lastDeliveredID = nil }
            return
        }
        guard let id = event.id else { return }
        state.withLock { $0.lastDeliveredID = id }
        // Only the next process depends on it; this one dedupes from memory either way.
        try? lastEventIDs?.setLastEventID(id, server: server)
    }
}
