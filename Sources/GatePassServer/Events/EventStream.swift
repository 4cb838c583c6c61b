import Foundation
import GatePassCore
import HTTPServer

/// The audience rule of api.md for one stream: OWNER/ADMIN every event of the organization;
/// an APPROVER the events of visitors assigned to it or unassigned; a scanner token the
/// events of its checkpoint (a decision is an event of the checkpoint that asked for it);
/// PLATFORM_ADMIN nothing; a HOST only the events for it alone. Events for one user (notification.*) reach only that user's
/// login streams; push.test for one device only the stream that presented its token.
struct EventStreamFilter: Sendable {
    enum Subscriber: Sendable {
        case user(Profile)
        case scanner(user: Profile, checkpointId: String)
    }

    var subscriber: Subscriber
    /// The device token the stream presented, if it is registered to the stream's user.
    var deviceToken: String?
    /// The session behind the stream's token: the stream ends when it does.
    var sessionId: String
    /// When that session expires; the hub ends the stream on its next tick after it.
    var sessionExpiresAt: Date

    init(principal: Principal, deviceToken: String?) {
        sessionId = principal.sessionId
        sessionExpiresAt = principal.sessionExpiresAt
        switch principal.credential {
        case .login: subscriber = .user(principal.user)
        case .scanner(let checkpointId), .kiosk(_, let checkpointId):
            subscriber = .scanner(user: principal.user, checkpointId: checkpointId)
        }
        self.deviceToken = deviceToken
    }

    private var user: Profile {
        switch subscriber {
        case .user(let user), .scanner(let user, _): user
        }
    }

    /// The user behind the stream's token.
    var userId: String { user.id }

    func admits(_ event: StoredEvent) -> Bool {
        let audience = event.audience
        guard audience.organizationId == user.organizationId else { return false }
        if let token = audience.deviceToken {
            return token == deviceToken && audience.userId == user.id
        }
        switch subscriber {
        case .user(let user):
            if let target = audience.userId { return target == user.id }
            switch user.role {
            case .owner, .admin: return true
            case .approver: return !audience.managersOnly && (audience.approverId == nil || audience.approverId == user.id)
            // A HOST sees only its own visitors, and the log has no audience column for a
            // visitor's host: it gets the events addressed to it alone.
            case .platformAdmin, .host: return false
            }
        case .scanner(_, let checkpointId):
            return audience.userId == nil && !audience.managersOnly && audience.checkpointId == checkpointId
        }
    }
}

/// One open `GET /api/events` response: frames queued by the hub, handed to libmicrohttpd
/// as the socket takes them. Never holds a thread; an idle stream's connection is suspended.
final class EventStream: HTTPStreamBody, @unchecked Sendable {
    struct Frame {
        var bytes: [UInt8]
        /// Set for events that count as a push delivery once fully handed to the socket.
        var deliveredEventId: Int64?
    }

    let filter: EventStreamFilter
    /// A client that stops reading must not make the server hold its backlog forever: past
    /// this many queued bytes the stream is ended, and the client resumes with Last-Event-ID.
    static let backlogLimit = 1 << 20

    // `lock` guards everything below it. The hub appends under it and calls `wake` after
    // releasing it (HTTPStreamBody's rule).
    private let lock = NSLock()
    private var frames: [Frame] = []
    private var head = 0
    private var offsetInHead = 0
    private var queuedBytes = 0
    private var ended = false
    private var isFinished = false
    private var wakeHandler: (@Sendable () -> Void)?
    private var delivered: [Int64] = []
    private var lastActivity = ContinuousClock.now
    private let onFinished: @Sendable (EventStream) -> Void

    /// Hub thread only: the last event id this stream has been offered.
    var cursor: Int64

    init(filter: EventStreamFilter, cursor: Int64, preamble: [UInt8], onFinished: @escaping @Sendable (EventStream) -> Void) {
        self.filter = filter
        self.cursor = cursor
        self.onFinished = onFinished
        frames.append(Frame(bytes: preamble, deliveredEventId: nil))
        queuedBytes = preamble.count
    }

    static func frame(id: Int64?, kind: String, data: String) -> [UInt8] {
        var text = ""
        if let id { text += "id: \(id)\n" }
        text += "event: \(kind)\ndata: \(data)\n\n"
        return Array(text.utf8)
    }

    static let ping = Array(": ping\n\n".utf8)

    // MARK: The hub's side

    /// Queues frames and wakes the connection; false when the stream is over (finished, or
    /// ended for its backlog).
    @discardableResult
    func enqueue(_ new: [Frame]) -> Bool {
        guard let wake = enqueueQuietly(new) else { return false }
        wake()
        return true
    }

    /// Queues frames and returns what wakes the connection, so that a fan-out can queue on
    /// every stream before waking any (the pool threads then find many ready at once).
    /// Nil when the stream is over.
    func enqueueQuietly(_ new: [Frame]) -> (@Sendable () -> Void)? {
        guard !new.isEmpty else { return {} }
        lock.lock()
        guard !ended, !isFinished else {
            lock.unlock()
            return nil
        }
        for frame in new {
            frames.append(frame)
            queuedBytes += frame.bytes.count
        }
        if queuedBytes > Self.backlogLimit {
            // Drop the backlog at once; the client's reconnect replays it from the log.
            ended = true
            frames.removeAll()
            head = 0
            offsetInHead = 0
            queuedBytes = 0
        }
        lastActivity = .now
        let wake = wakeHandler
        lock.unlock()
        return wake ?? {}
    }

    /// Whether nothing was queued for `interval` (time for a ping).
    func idle(for interval: Duration) -> Bool {
        lock.withLock { ContinuousClock.now - lastActivity >= interval }
    }

    /// Event ids fully handed to the socket since the last call (for push deliveries).
    func takeDelivered() -> [Int64] {
        lock.withLock {
            defer { delivered.removeAll() }
            return delivered
        }
    }

    /// Ends the stream at its next read (server stopping).
    func end() {
        lock.lock()
        ended = true
        let wake = wakeHandler
        lock.unlock()
        wake?()
    }

    var isOver: Bool { lock.withLock { isFinished } }

    // MARK: HTTPStreamBody

    func start(wake: @escaping @Sendable () -> Void) {
        lock.withLock { wakeHandler = wake }
    }

    func read(into buffer: UnsafeMutableRawBufferPointer) -> Int? {
        lock.lock()
        defer { lock.unlock() }
        var written = 0
        while head < frames.count, written < buffer.count {
            let frame = frames[head]
            let count = min(frame.bytes.count - offsetInHead, buffer.count - written)
            frame.bytes.withUnsafeBytes { source in
                buffer.baseAddress!.advanced(by: written)
                    .copyMemory(from: source.baseAddress!.advanced(by: offsetInHead), byteCount: count)
            }
            written += count
            offsetInHead += count
            if offsetInHead == frame.bytes.count {
                if let id = frame.deliveredEventId { delivered.append(id) }
                queuedBytes -= frame.bytes.count
                head += 1
                offsetInHead = 0
            }
        }
        if head == frames.count {
            frames.removeAll(keepingCapacity: true)
            head = 0
        } else if head > 64 {
            frames.removeFirst(head)
            head = 0
        }
        if written > 0 { return written }
        return ended ? nil : 0
    }

    func finished() {
        lock.withLock {
            isFinished = true
            wakeHandler = nil
            frames.removeAll()
        }
        onFinished(self)
    }
}
