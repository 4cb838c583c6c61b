import CMicroHTTPD
import Foundation
import GatePassCore
import Synchronization

/// An HTTP/1.1 server on libmicrohttpd with an internal thread pool (epoll).
///
/// Each request is read completely (up to `bodyLimit`) and handed to the responder on the
/// pool thread that owns its connection. A body over the limit is never buffered: a
/// `Content-Length` over the limit is answered before the body is read, and a chunked body
/// is counted and discarded once it passes the limit. A request whose head breaks
/// `RequestFraming`'s rules reaches the responder at once with `malformation` set and its
/// answer closes the connection. Once a stop begins, every new request — on a new connection
/// or a kept-alive one — is answered `unansweredAtStop` with `Connection: close`, while the
/// requests begun before finish.
///
/// Ownership: from `start` until `stop` returns, the daemon holds a strong reference to this
/// object (its callbacks' context), so nothing the daemon calls can outlive it.
public final class HTTPServer: Sendable {
    public struct Configuration: Sendable {
        public var host: String
        public var port: UInt16
        public var threads: Int
        public var bodyLimit: Int
        /// libmicrohttpd's own timeout: a connection with no traffic at all for this long is
        /// closed (a backstop; the deadlines below do not restart with every byte).
        public var connectionTimeoutSeconds: Int
        /// Open connections at most (event streams included); each needs a file descriptor.
        public var connectionLimit: Int
        /// Open connections per IPv4 address at most; `trustedProxies` are exempt.
        public var maxConnectionsPerIP: Int
        /// Addresses (dotted IPv4) exempt from the per-address cap, such as a reverse proxy.
        public var trustedProxies: [String]
        /// A request's headers must be complete this long after the connection opened (or,
        /// on a kept-alive connection, after its request line arrived).
        public var headerTimeoutSeconds: Int
        /// A request's body must be complete this long after its headers.
        public var bodyTimeoutSeconds: Int
        /// A kept-alive connection must start its next request within this long.
        public var keepAliveTimeoutSeconds: Int
        /// What a request still unanswered at the end of a stop's grace period is answered.
        public var unansweredAtStop: HTTPResponse
        /// Where libmicrohttpd's own messages go once the server listens (a failed start says
        /// what went wrong in its error instead); nil drops them. The library never prints.
        public var daemonLog: (@Sendable (String) -> Void)?

        public init(host: String = "127.0.0.1", port: UInt16 = 0, threads: Int = 4, bodyLimit: Int = 65_536,
                    connectionTimeoutSeconds: Int = 30, connectionLimit: Int = 4_096, maxConnectionsPerIP: Int = 64,
                    trustedProxies: [String] = [], headerTimeoutSeconds: Int = 10, bodyTimeoutSeconds: Int = 30,
                    keepAliveTimeoutSeconds: Int = 30,
                    unansweredAtStop: HTTPResponse = HTTPResponse(
                        status: 503, headers: [("Content-Type", "text/plain; charset=utf-8")],
                        body: Array("the server is stopping\n".utf8)),
                    daemonLog: (@Sendable (String) -> Void)? = nil) {
            self.host = host
            self.port = port
            self.threads = threads
            self.bodyLimit = bodyLimit
            self.connectionTimeoutSeconds = connectionTimeoutSeconds
            self.connectionLimit = connectionLimit
            self.maxConnectionsPerIP = maxConnectionsPerIP
            self.trustedProxies = trustedProxies
            self.headerTimeoutSeconds = headerTimeoutSeconds
            self.bodyTimeoutSeconds = bodyTimeoutSeconds
            self.keepAliveTimeoutSeconds = keepAliveTimeoutSeconds
            self.unansweredAtStop = unansweredAtStop
            self.daemonLog = daemonLog
        }
    }

    public let configuration: Configuration
    let responder: any HTTPResponder
    /// Each connection's memory pool in libmicrohttpd (its read buffer and a request's head):
    /// libmicrohttpd's own default. The pool is zeroed between the requests of a kept-alive
    /// connection, so a larger one costs every request (128 KiB was 4 % of a stats answer's
    /// time in issue 15's profile); bodies are gathered on our side, not in the pool. A head
    /// larger than the pool is 431.
    static let connectionMemory = 32 * 1024
    /// The running `MHD_Daemon`'s address (`Locked` holds Sendable values only, and a raw
    /// pointer is not one; libmicrohttpd lets another thread than the starter stop it).
    private let daemon = Locked<UInt?>(nil)
    /// Requests begun and not yet completed, for a graceful stop. Streams are not counted:
    /// they never complete by themselves.
    let inFlight = Atomic<Int>(0)
    /// Requests handed to the responder and not answered yet, answered by `stop` if needed.
    /// Once `stopping` is set (under the same lock), a request answers itself with
    /// `unansweredAtStop` at dispatch and a new stream ends at once, so that nothing can be
    /// left suspended when the daemon stops (libmicrohttpd aborts the process then).
    let unanswered = Locked<(requests: [ObjectIdentifier: RequestState], stopping: Bool)>(([:], false))
    /// Streaming responses under way, ended by `stop`.
    let streams = Locked<[ObjectIdentifier: StreamState]>([:])
    private let boundPort = Atomic<UInt16>(0)
    /// Set when a stop begins (`beginStop`): from then on a request whose head arrives is
    /// answered `unansweredAtStop` at once, with `Connection: close`, and is not counted in
    /// `inFlight`.
    private let stopBegun = Atomic<Bool>(false)
    let connectionGuard: ConnectionGuard
    /// libmicrohttpd's messages while `start` runs, read when the start fails; nil once the
    /// server listens (from then on they go to `daemonLog`).
    private let startMessages = Locked<[String]?>(nil)

    public init(configuration: Configuration, responder: any HTTPResponder) {
        self.configuration = configuration
        self.responder = responder
        connectionGuard = ConnectionGuard(limits: .init(
            perAddress: max(1, configuration.maxConnectionsPerIP),
            exempt: Set(configuration.trustedProxies.compactMap(ipv4Address)),
            headerTimeout: .seconds(max(1, configuration.headerTimeoutSeconds)),
            bodyTimeout: .seconds(max(1, configuration.bodyTimeoutSeconds)),
            keepAliveTimeout: .seconds(max(1, configuration.keepAliveTimeoutSeconds))))
    }

    /// The port the server listens on (after `start`).
    public var port: UInt16 { boundPort.load(ordering: .acquiring) }

    /// Connections refused at the per-address cap and closed for a deadline so far.
    public var guardCounters: (refusedAtCap: Int, closedForDeadline: Int) {
        connectionGuard.counters
    }

    /// Open connections from one IPv4 address, as counted against its cap (0 for an address
    /// that is exempt or not an IPv4 address).
    public func openConnections(from address: String) -> Int {
        ipv4Address(address).map { connectionGuard.openConnections(from: $0) } ?? 0
    }

    /// Signalled after a connection opens or closes: wait on it for a count of
    /// `openConnections(from:)` rather than polling.
    public var connectionChanges: ChangeSignal { connectionGuard.changes }

    /// True once a stop has begun.
    public var isStopping: Bool { stopBegun.load(ordering: .sequentiallyConsistent) }

    /// Signalled when a stop begins: wait on it for `isStopping` rather than polling.
    public let stopChanges = ChangeSignal()

    /// Begins a stop: every request whose head arrives from now on, on a new or a kept-alive
    /// connection, is answered `unansweredAtStop` with `Connection: close` without reaching
    /// the responder; requests begun before are served. `stop` calls it first; an owner with
    /// work of its own to end before `stop` (streams, timers) calls it at the start of that.
    public func beginStop() {
        stopBegun.store(true, ordering: .sequentiallyConsistent)
        stopChanges.signal()
    }

    /// Binds and starts serving. Returns the port bound (useful with port 0).
    @discardableResult
    public func start() throws(HTTPServerError) -> UInt16 {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = configuration.port.bigEndian
        guard inet_pton(AF_INET, configuration.host, &address.sin_addr) == 1 else {
            throw HTTPServerError(message: "cannot listen on \(configuration.host): give an IPv4 address such as 127.0.0.1 or 0.0.0.0")
        }
        if let bad = configuration.trustedProxies.first(where: { ipv4Address($0) == nil }) {
            throw HTTPServerError(message: "trustedProxies: \(bad.debugDescription) is not an IPv4 address such as 10.0.0.5")
        }
        startMessages.withLock { $0 = [] }
        let flags = MHD_USE_INTERNAL_POLLING_THREAD.rawValue | MHD_USE_EPOLL.rawValue | MHD_USE_ITC.rawValue
            | MHD_USE_TURBO.rawValue | MHD_USE_ERROR_LOG.rawValue | MHD_ALLOW_SUSPEND_RESUME.rawValue
        // The daemon owns a reference for as long as it runs; `stop` gives it back.
        let context = Unmanaged.passRetained(self).toOpaque()
        var callbacks = gatepass_mhd_callbacks(accept_policy: acceptPolicy, access: accessHandler,
                                               completed: completedHandler, connection: connectionNotified,
                                               uri_log: requestLineLogged, unescape: leaveEscaped, log: daemonMessageLogged,
                                               context: context)
        let started = withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { socketAddress in
                gatepass_mhd_start(UInt32(flags), socketAddress, UInt32(max(1, configuration.threads)),
                                   UInt32(configuration.connectionTimeoutSeconds), Self.connectionMemory,
                                   UInt32(max(1, configuration.connectionLimit)), &callbacks)
            }
        }
        let messages = startMessages.withLock { messages -> [String] in
            defer { messages = nil }
            return messages ?? []
        }
        guard let started else {
            Unmanaged<HTTPServer>.fromOpaque(context).release()
            throw HTTPServerError(message: Self.startFailure(host: configuration.host, port: configuration.port, messages: messages))
        }
        if let daemonLog = configuration.daemonLog { messages.forEach(daemonLog) }
        let port = gatepass_mhd_bound_port(started)
        let handle = UInt(bitPattern: started)
        daemon.withLock { $0 = handle }
        boundPort.store(port, ordering: .releasing)
        connectionGuard.start()
        return port
    }

    /// A message of libmicrohttpd's: kept while `start` runs, logged after.
    func heard(daemonMessage: String) {
        let line = daemonMessage.trimmingCharacters(in: .whitespacesAndNewlines)
        let kept = startMessages.withLock { messages -> Bool in
            guard messages != nil else { return false }
            messages?.append(line)
            return true
        }
        if !kept { configuration.daemonLog?(line) }
    }

    /// Why the daemon did not start, in one sentence of ours (libmicrohttpd's own message is
    /// never printed: the port's owner and the cure are what an operator needs).
    static func startFailure(host: String, port: UInt16, messages: [String]) -> String {
        let place = "cannot listen on \(host):\(port)"
        let said = messages.joined(separator: " ")
        if said.contains(String(cString: strerror(EADDRINUSE))) {
            return "\(place): the port is in use by another program; stop it, or choose another port (--port, or 0 for a free one)"
        }
        if said.contains(String(cString: strerror(EACCES))) {
            return "\(place): not permitted (ports below 1024 need privileges); choose a port from 1024 up"
        }
        if said.contains(String(cString: strerror(EADDRNOTAVAIL))) {
            return "\(place): this machine has no such address; give one of its own addresses, or 0.0.0.0"
        }
        let reason = messages.last.map { " (" + TerminalText.visible($0) + ")" } ?? ""
        return "\(place)\(reason); the port may be in use or not permitted: choose another (--port, or 0 for a free one)"
    }

    /// Waits until no request is in flight or `grace` has passed; true when none is left.
    /// Requests that arrive meanwhile are served too.
    @discardableResult
    public func waitForRequestsInFlight(grace: Duration) -> Bool {
        let deadline = ContinuousClock.now + grace
        while inFlight.load(ordering: .sequentiallyConsistent) > 0 {
            if ContinuousClock.now >= deadline { return false }
            Thread.sleep(forTimeInterval: 0.01)
        }
        return true
    }

    /// Refuses new requests from now on (`beginStop`); lets requests in flight finish (up to
    /// `grace`); answers those still waiting for their responder with `unansweredAtStop` and
    /// lets those answers reach the socket; ends every stream; then closes the listening
    /// socket and every connection and joins the pool threads. After it returns, a late reply
    /// from the responder is dropped: it never touches the stopped daemon.
    public func stop(grace: Duration = .seconds(10)) {
        guard daemon.withLock({ $0 }) != nil else { return }
        beginStop()
        // No MHD_quiesce_daemon: with an epoll thread pool it can abort the process
        // ("Failed to remove listen FD from epoll set", seen in 0.9.75 under parallel tests).
        waitForRequestsInFlight(grace: grace)
        let waiting = unanswered.withLock { table -> [RequestState] in
            table.stopping = true
            return Array(table.requests.values)
        }
        for state in waiting { deliver(configuration.unansweredAtStop, to: state) }
        waitForRequestsInFlight(grace: .seconds(5))
        // End every stream: a suspended connection is resumed so that its reader says "over".
        for stream in streams.withLock({ Array($0.values) }) { stream.end() }
        let streamsDeadline = ContinuousClock.now + .seconds(5)
        while !streams.withLock({ $0.isEmpty }) && ContinuousClock.now < streamsDeadline {
            Thread.sleep(forTimeInterval: 0.01)
        }
        connectionGuard.stop()
        guard let running = daemon.withLock({ value -> UInt? in
            defer { value = nil }
            return value
        }).flatMap({ OpaquePointer(bitPattern: $0) }) else { return }
        MHD_stop_daemon(running)
        // Every callback has returned: the daemon's reference can go.
        Unmanaged.passUnretained(self).release()
    }
}
