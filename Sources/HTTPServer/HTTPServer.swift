import CMicroHTTPD
import Foundation
import Synchronization

/// An HTTP/1.1 server on libmicrohttpd with an internal thread pool (epoll).
///
/// Each request is read completely (up to `bodyLimit`) and handed to the responder on the
/// pool thread that owns its connection. A body over the limit is never buffered: a
/// `Content-Length` over the limit is answered before the body is read, and a chunked body
/// is counted and discarded once it passes the limit.
public final class HTTPServer: Sendable {
    public struct Configuration: Sendable {
        public var host: String
        public var port: UInt16
        public var threads: Int
        public var bodyLimit: Int
        public var connectionTimeoutSeconds: Int
        /// Open connections at most (event streams included); each needs a file descriptor.
        public var connectionLimit: Int

        public init(host: String = "127.0.0.1", port: UInt16 = 0, threads: Int = 4, bodyLimit: Int = 65_536,
                    connectionTimeoutSeconds: Int = 30, connectionLimit: Int = 4_096) {
            self.host = host
            self.port = port
            self.threads = threads
            self.bodyLimit = bodyLimit
            self.connectionTimeoutSeconds = connectionTimeoutSeconds
            self.connectionLimit = connectionLimit
        }
    }

    public let configuration: Configuration
    let responder: any HTTPResponder
    private let daemon = Mutex<OpaquePointer?>(nil)
    /// Requests begun and not yet completed, for a graceful stop. Streams are not counted:
    /// they never complete by themselves.
    let inFlight = Atomic<Int>(0)
    /// Streaming responses under way, ended by `stop`.
    let streams = Mutex<[ObjectIdentifier: StreamState]>([:])
    private let boundPort = Atomic<UInt16>(0)

    public init(configuration: Configuration, responder: any HTTPResponder) {
        self.configuration = configuration
        self.responder = responder
    }

    /// The port the server listens on (after `start`).
    public var port: UInt16 { boundPort.load(ordering: .acquiring) }

    /// Binds and starts serving. Returns the port bound (useful with port 0).
    @discardableResult
    public func start() throws(HTTPServerError) -> UInt16 {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = configuration.port.bigEndian
        guard inet_pton(AF_INET, configuration.host, &address.sin_addr) == 1 else {
            throw HTTPServerError(message: "cannot listen on \(configuration.host): give an IPv4 address such as 127.0.0.1 or 0.0.0.0")
        }
        let flags = MHD_USE_INTERNAL_POLLING_THREAD.rawValue | MHD_USE_EPOLL.rawValue | MHD_USE_ITC.rawValue
            | MHD_USE_TURBO.rawValue | MHD_USE_ERROR_LOG.rawValue | MHD_ALLOW_SUSPEND_RESUME.rawValue
        let context = Unmanaged.passUnretained(self).toOpaque()
        let started = withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { socketAddress in
                gatepass_mhd_start(UInt32(flags), socketAddress, UInt32(max(1, configuration.threads)),
                                   UInt32(configuration.connectionTimeoutSeconds), 128 * 1024,
                                   UInt32(max(1, configuration.connectionLimit)),
                                   accessHandler, context, completedHandler, context)
            }
        }
        guard let started else {
            throw HTTPServerError(message: "cannot listen on \(configuration.host):\(configuration.port) (in use, or not permitted)")
        }
        let port = gatepass_mhd_bound_port(started)
        let handle = UInt(bitPattern: started)
        daemon.withLock { $0 = OpaquePointer(bitPattern: handle) }
        boundPort.store(port, ordering: .releasing)
        return port
    }

    /// Lets requests in flight finish (up to `grace`), then closes the listening socket and
    /// every connection and joins the pool threads.
    public func stop(grace: Duration = .seconds(10)) {
        guard let running = daemon.withLock({ value -> OpaquePointer? in
            defer { value = nil }
            return value
        }) else { return }
        // No MHD_quiesce_daemon: with an epoll thread pool it can abort the process
        // ("Failed to remove listen FD from epoll set", seen in 0.9.75 under parallel tests).
        // Requests that arrive during the grace period are simply served too.
        let deadline = ContinuousClock.now + grace
        while inFlight.load(ordering: .acquiring) > 0 && ContinuousClock.now < deadline {
            Thread.sleep(forTimeInterval: 0.01)
        }
        // End every stream: a suspended connection is resumed so that its reader says "over".
        for stream in streams.withLock({ Array($0.values) }) { stream.end() }
        let streamsDeadline = ContinuousClock.now + .seconds(1)
        while !streams.withLock({ $0.isEmpty }) && ContinuousClock.now < streamsDeadline {
            Thread.sleep(forTimeInterval: 0.01)
        }
        MHD_stop_daemon(running)
    }

    deinit { stop(grace: .zero) }
}

// MARK: - libmicrohttpd callbacks

/// State of one request across the access handler's calls (MHD's `con_cls`).
final class RequestState: @unchecked Sendable {
    // Body fields are used only by the access handler (one thread per connection at a time);
    // `response` and `suspended` are shared with the responder's reply and guarded by `lock`.
    var body: [UInt8] = []
    var bodyExceededLimit = false
    var dispatched = false
    let lock = NSLock()
    var response: HTTPResponse?
    var suspended = false
    /// The answer is a stream, which no longer counts as in flight.
    var streaming = false
}

/// One streaming response: its body and whether its connection is suspended waiting for it.
final class StreamState: @unchecked Sendable {
    let body: any HTTPStreamBody
    let server: HTTPServer
    private let connectionAddress: UInt
    // Guards `suspended`, `ending` and `closed`; the reader holds it across body.read and
    // suspend so that a wake in between cannot be lost.
    private let lock = NSLock()
    private var suspended = false
    private var ending = false
    private var closed = false

    init(body: any HTTPStreamBody, server: HTTPServer, connection: OpaquePointer) {
        self.body = body
        self.server = server
        connectionAddress = UInt(bitPattern: connection)
    }

    /// libmicrohttpd asks for more of the body.
    func read(into buffer: UnsafeMutableRawBufferPointer) -> Int {
        lock.lock()
        defer { lock.unlock() }
        guard !ending, !peerHasClosed() else { return gatepass_mhd_end_of_stream() }
        guard let count = body.read(into: buffer) else { return gatepass_mhd_end_of_stream() }
        if count > 0 { return count }
        // Nothing yet: returning 0 alone would make libmicrohttpd poll us in a loop.
        suspended = true
        if let connection = OpaquePointer(bitPattern: connectionAddress) { MHD_suspend_connection(connection) }
        return 0
    }

    /// A suspended connection is not watched, so a client that left is only noticed when
    /// bytes are written, and the first write after the peer's FIN still succeeds. A stream
    /// client sends nothing after its request, so a readable end-of-file means it is gone.
    private func peerHasClosed() -> Bool {
        guard let connection = OpaquePointer(bitPattern: connectionAddress) else { return true }
        let socket = gatepass_mhd_connection_fd(connection)
        guard socket >= 0 else { return false }
        var byte: UInt8 = 0
        let received = recv(socket, &byte, 1, Int32(MSG_PEEK | MSG_DONTWAIT))
        return received == 0 || (received < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
    }

    func wake() {
        lock.lock()
        guard suspended, !closed else {
            lock.unlock()
            return
        }
        suspended = false
        lock.unlock()
        // Outside the lock, so a worker reading another frame never waits on the resume's
        // signal. Safe: a suspended connection is neither read nor closed until resumed.
        if let connection = OpaquePointer(bitPattern: connectionAddress) { MHD_resume_connection(connection) }
    }

    /// Ends the stream at the next read.
    func end() {
        lock.lock()
        ending = true
        lock.unlock()
        wake()
    }

    /// libmicrohttpd is done with the response (the connection is closing).
    func close() {
        lock.lock()
        closed = true
        lock.unlock()
        body.finished()
        server.streams.withLock { _ = $0.removeValue(forKey: ObjectIdentifier(self)) }
    }
}

private let streamReader: MHD_ContentReaderCallback = { context, _, buffer, max in
    guard let context, let buffer else { return gatepass_mhd_end_of_stream() }
    let state = Unmanaged<StreamState>.fromOpaque(context).takeUnretainedValue()
    return state.read(into: UnsafeMutableRawBufferPointer(start: buffer, count: max))
}

private let streamFinished: MHD_ContentReaderFreeCallback = { context in
    guard let context else { return }
    let state = Unmanaged<StreamState>.fromOpaque(context).takeRetainedValue()
    state.close()
}

private let accessHandler: MHD_AccessHandlerCallback = {
    context, connection, url, method, _, uploadData, uploadDataSize, requestState in
    guard let context, let connection, let url, let method, let uploadDataSize, let requestState else {
        return gatepass_mhd_no()
    }
    let server = Unmanaged<HTTPServer>.fromOpaque(context).takeUnretainedValue()
    // First call: headers are in, no body yet.
    guard let stateRaw = requestState.pointee else {
        let state = RequestState()
        requestState.pointee = Unmanaged.passRetained(state).toOpaque()
        server.inFlight.add(1, ordering: .relaxed)
        if let length = MHD_lookup_connection_value(connection, .HEADER_KIND, "Content-Length"),
           let declared = Int(String(cString: length)), declared > server.configuration.bodyLimit {
            // Answer now; libmicrohttpd then closes the connection instead of reading the body.
            state.bodyExceededLimit = true
            return server.dispatch(connection: connection, url: url, method: method, state: state)
        }
        return gatepass_mhd_yes()
    }
    let state = Unmanaged<RequestState>.fromOpaque(stateRaw).takeUnretainedValue()
    // Called again after a resume: the reply is waiting.
    if state.dispatched { return server.queueOrSuspend(state, connection) }
    if uploadDataSize.pointee > 0 {
        let count = uploadDataSize.pointee
        if !state.bodyExceededLimit, let uploadData {
            if state.body.count + count > server.configuration.bodyLimit {
                state.bodyExceededLimit = true
                state.body = []
            } else {
                uploadData.withMemoryRebound(to: UInt8.self, capacity: count) {
                    state.body.append(contentsOf: UnsafeBufferPointer(start: $0, count: count))
                }
            }
        }
        uploadDataSize.pointee = 0
        return gatepass_mhd_yes()
    }
    return server.dispatch(connection: connection, url: url, method: method, state: state)
}

private let completedHandler: MHD_RequestCompletedCallback = { context, _, requestState, _ in
    guard let context, let requestState, let stateRaw = requestState.pointee else { return }
    defer {
        Unmanaged<RequestState>.fromOpaque(stateRaw).release()
        requestState.pointee = nil
    }
    let state = Unmanaged<RequestState>.fromOpaque(stateRaw).takeUnretainedValue()
    let server = Unmanaged<HTTPServer>.fromOpaque(context).takeUnretainedValue()
    if !state.streaming { server.inFlight.subtract(1, ordering: .relaxed) }
}

/// Collects key/value pairs from `MHD_get_connection_values`.
private final class ValueCollector {
    var values: [String: String] = [:]
    let lowercaseKeys: Bool
    init(lowercaseKeys: Bool) { self.lowercaseKeys = lowercaseKeys }
}

private let collectValue: MHD_KeyValueIterator = { context, _, key, value in
    guard let context, let key else { return gatepass_mhd_yes() }
    let collector = Unmanaged<ValueCollector>.fromOpaque(context).takeUnretainedValue()
    var name = String(cString: key)
    if collector.lowercaseKeys { name = name.lowercased() }
    if collector.values[name] == nil {
        collector.values[name] = value.map { String(cString: $0) } ?? ""
    }
    return gatepass_mhd_yes()
}

extension HTTPServer {
    fileprivate func dispatch(connection: OpaquePointer, url: UnsafePointer<CChar>, method: UnsafePointer<CChar>,
                              state: RequestState) -> MHD_Result {
        let headers = ValueCollector(lowercaseKeys: true)
        let query = ValueCollector(lowercaseKeys: false)
        withExtendedLifetime(headers) {
            _ = MHD_get_connection_values(connection, .HEADER_KIND, collectValue,
                                          Unmanaged.passUnretained(headers).toOpaque())
        }
        withExtendedLifetime(query) {
            _ = MHD_get_connection_values(connection, .GET_ARGUMENT_KIND, collectValue,
                                          Unmanaged.passUnretained(query).toOpaque())
        }
        let request = HTTPRequest(method: String(cString: method), path: String(cString: url), query: query.values,
                                  headers: headers.values, body: state.body,
                                  bodyExceededLimit: state.bodyExceededLimit)
        state.body = []
        state.dispatched = true
        let connectionAddress = UInt(bitPattern: connection)
        responder.respond(to: request) { response in
            state.lock.lock()
            state.response = response
            let mustResume = state.suspended
            state.suspended = false
            state.lock.unlock()
            // libmicrohttpd then calls the access handler again, which queues the response.
            if mustResume, let connection = OpaquePointer(bitPattern: connectionAddress) {
                MHD_resume_connection(connection)
            }
        }
        return queueOrSuspend(state, connection)
    }

    /// Queues the reply if it is there; otherwise suspends the connection until it comes.
    /// The lock makes "reply arrives" and "connection suspends" happen in one order or the other.
    fileprivate func queueOrSuspend(_ state: RequestState, _ connection: OpaquePointer) -> MHD_Result {
        state.lock.lock()
        if let response = state.response {
            state.response = nil
            state.lock.unlock()
            if let stream = response.stream {
                state.streaming = true
                inFlight.subtract(1, ordering: .relaxed)
                return queueStream(response, stream, on: connection)
            }
            return Self.queue(response, on: connection)
        }
        state.suspended = true
        MHD_suspend_connection(connection)
        state.lock.unlock()
        return gatepass_mhd_yes()
    }

    fileprivate func queueStream(_ response: HTTPResponse, _ body: any HTTPStreamBody,
                                 on connection: OpaquePointer) -> MHD_Result {
        let stream = StreamState(body: body, server: self, connection: connection)
        streams.withLock { $0[ObjectIdentifier(stream)] = stream }
        let context = Unmanaged.passRetained(stream).toOpaque()
        guard let mhdResponse = MHD_create_response_from_callback(gatepass_mhd_size_unknown(), 4_096, streamReader,
                                                                  context, streamFinished) else {
            Unmanaged<StreamState>.fromOpaque(context).release()
            streams.withLock { _ = $0.removeValue(forKey: ObjectIdentifier(stream)) }
            return gatepass_mhd_no()
        }
        defer { MHD_destroy_response(mhdResponse) }
        for header in response.headers {
            _ = MHD_add_response_header(mhdResponse, header.name, header.value)
        }
        body.start { [weak stream] in stream?.wake() }
        return MHD_queue_response(connection, UInt32(response.status), mhdResponse)
    }

    static func queue(_ response: HTTPResponse, on connection: OpaquePointer) -> MHD_Result {
        var body = response.body
        let mhdResponse = body.withUnsafeMutableBytes {
            MHD_create_response_from_buffer($0.count, $0.baseAddress, .RESPMEM_MUST_COPY)
        }
        guard let mhdResponse else { return gatepass_mhd_no() }
        defer { MHD_destroy_response(mhdResponse) }
        for header in response.headers {
            _ = MHD_add_response_header(mhdResponse, header.name, header.value)
        }
        return MHD_queue_response(connection, UInt32(response.status), mhdResponse)
    }
}
