import CPostgres
import Glibc

/// A message sent with `NOTIFY` or `pg_notify(channel, payload)` to a channel this connection listens on.
public struct PGNotification: Sendable, Equatable {
    public var channel: String
    public var payload: String
    /// The process id of the server backend that sent it.
    public var pid: Int32

    public init(channel: String, payload: String, pid: Int32) {
        self.channel = channel
        self.payload = payload
        self.pid = pid
    }
}

extension PGConnection {
    /// Starts listening on `channel` (`LISTEN "channel"`). Sending is plain SQL:
    /// `try other.execute("SELECT pg_notify(?, ?)", [channel, payload])`.
    /// - Parameter channel: lower-case letters, digits and underscores, not starting with a
    ///   digit. Channel names are constants in our code, so any other name is a bug: it traps.
    public func listen(_ channel: String) throws(PGError) {
        precondition(Self.isValidChannelName(channel), "not a channel name this code uses: \(channel.debugDescription)")
        try executeScript("LISTEN \"\(channel)\"")
    }

    /// Stops listening on `channel` (`UNLISTEN "channel"`).
    public func unlisten(_ channel: String) throws(PGError) {
        precondition(Self.isValidChannelName(channel), "not a channel name this code uses: \(channel.debugDescription)")
        try executeScript("UNLISTEN \"\(channel)\"")
    }

    /// `[a-z_][a-z0-9_]*`, at most 63 bytes (PostgreSQL's identifier length): quoted, such a
    /// name is the same identifier `pg_notify` receives unquoted.
    static func isValidChannelName(_ channel: String) -> Bool {
        guard let first = channel.utf8.first, channel.utf8.count <= 63,
              first == UInt8(ascii: "_") || (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(first) else { return false }
        return channel.utf8.allSatisfy {
            $0 == UInt8(ascii: "_") || (UInt8(ascii: "a")...UInt8(ascii: "z")).contains($0)
                || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0)
        }
    }

    /// The connection's socket (`PQsocket`), for a caller that waits on several connections
    /// with its own `poll`; -1 when there is no connection.
    public var socket: Int32 { isClosed ? -1 : PQsocket(handle) }

    /// The notifications that have arrived, without waiting: reads what the socket holds
    /// (`PQconsumeInput`), then takes every notification libpq has parsed (`PQnotifies`).
    public func notifications() throws(PGError) -> [PGNotification] {
        precondition(!isClosed, "PGConnection used after close()")
        guard PQconsumeInput(handle) == 1 else {
            throw PGError(message: LibPQ.errorMessage(handle), connectionWasBad: true)
        }
        return drainNotifications()
    }

    /// Waits until a notification arrives or `timeoutMilliseconds` pass, and returns what
    /// arrived (empty after a timeout). Notifications that came in during an earlier query
    /// are returned at once. The corresponding C calls are `poll` on `PQsocket`, then
    /// `PQconsumeInput` and `PQnotifies`.
    public func waitForNotifications(timeoutMilliseconds: Int32) throws(PGError) -> [PGNotification] {
        precondition(!isClosed, "PGConnection used after close()")
        let already = drainNotifications()
        guard already.isEmpty else { return already }
        let clock = ContinuousClock()
        let deadline = clock.now.advanced(by: .milliseconds(timeoutMilliseconds))
        while true {
            let remaining = clock.now.duration(to: deadline)
            guard remaining > .zero else { return [] }
            let (seconds, attoseconds) = remaining.components
            let milliseconds = Int32(clamping: seconds * 1000 + attoseconds / 1_000_000_000_000_000 + 1)
            var descriptor = pollfd(fd: socket, events: Int16(POLLIN), revents: 0)
            guard descriptor.fd >= 0 else {
                throw PGError(message: "the connection has no socket", connectionWasBad: true)
            }
            let ready = poll(&descriptor, 1, milliseconds)
            if ready < 0 {
                if errno == EINTR { continue }
                throw PGError(message: "poll on the connection's socket failed: \(String(cString: strerror(errno)))",
                              connectionWasBad: !isHealthy)
            }
            guard ready > 0 else { continue }
            // Readable may mean half a message; then nothing is parsed yet and the wait goes on.
            let arrived = try notifications()
            if !arrived.isEmpty { return arrived }
        }
    }

    private func drainNotifications() -> [PGNotification] {
        var arrived: [PGNotification] = []
        while let notify = PQnotifies(handle) {
            let message = notify.pointee
            arrived.append(PGNotification(channel: String(cString: message.relname),
                                          payload: message.extra.map { String(cString: $0) } ?? "",
                                          pid: message.be_pid))
            PQfreemem(notify)
        }
        return arrived
    }
}
