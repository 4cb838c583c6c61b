import CMicroHTTPD
import Foundation

// MARK: - Request state

/// State of one request across the access handler's calls (MHD's `con_cls`).
final class RequestState: @unchecked Sendable {
    // Body fields are used only by the access handler (one thread per connection at a time);
    // the fields below `lock` are shared with the responder's reply and `stop`, guarded by it.
    var body: [UInt8] = []
    var bodyExceededLimit = false
    var dispatched = false
    /// The head broke a framing rule, or arrived after a stop began: the answer closes the connection.
    var closeAfterAnswer = false
    /// Counted in the server's `inFlight` (a request refused at a stop is not: nothing waits for it).
    var countedInFlight = true
    /// The head, read at the first call and kept until the body is complete.
    var headers: [(name: String, value: String)] = []
    var target = RequestFraming.Target.unparsed
    /// Why the head breaks a framing rule, when it does.
    var malformation: String?
    let connectionAddress: UInt
    let lock = NSLock()
    var response: HTTPResponse?
    var suspended = false
    /// The first answer wins (the responder's, or `stop`'s); later ones are dropped.
    var answered = false
    /// False once libmicrohttpd has completed the request: the connection may be gone.
    var connectionAlive = true
    /// The answer is a stream, which no longer counts as in flight.
    var streaming = false

    init(connection: OpaquePointer) {
        connectionAddress = UInt(bitPattern: connection)
    }
}

// MARK: - libmicrohttpd callbacks

private func server(_ context: UnsafeMutableRawPointer) -> HTTPServer {
    Unmanaged<HTTPServer>.fromOpaque(context).takeUnretainedValue()
}

private func record(of connection: OpaquePointer) -> ConnectionGuard.Record? {
    gatepass_mhd_socket_context(connection).map { Unmanaged<ConnectionGuard.Record>.fromOpaque($0).takeUnretainedValue() }
}

let acceptPolicy: MHD_AcceptPolicyCallback = { context, address, _ in
    guard let context else { return gatepass_mhd_no() }
    return server(context).connectionGuard.mayAccept(address: gatepass_sockaddr_ipv4(address))
        ? gatepass_mhd_yes() : gatepass_mhd_no()
}

let connectionNotified: MHD_NotifyConnectionCallback = { context, connection, socketContext, event in
    guard let context, let connection, let socketContext else { return }
    let connectionGuard = server(context).connectionGuard
    switch event {
    case .CONNECTION_NOTIFY_STARTED:
        let record = connectionGuard.admit(address: gatepass_mhd_connection_ipv4(connection),
                                           socket: gatepass_mhd_connection_fd(connection))
        socketContext.pointee = Unmanaged.passRetained(record).toOpaque()
    case .CONNECTION_NOTIFY_CLOSED:
        guard let raw = socketContext.pointee else { return }
        socketContext.pointee = nil
        connectionGuard.closed(Unmanaged<ConnectionGuard.Record>.fromOpaque(raw).takeRetainedValue())
    default:
        break
    }
}

/// libmicrohttpd's own messages (MHD_OPTION_EXTERNAL_LOGGER), formatted here and handed to
/// the server, which never lets the library write to stderr itself.
let daemonMessageLogged: MHD_LogCallback = { context, format, arguments in
    guard let context, let format, let arguments else { return }
    var text = [CChar](repeating: 0, count: 512)
    _ = vsnprintf(&text, text.count, format, arguments)
    server(context).heard(daemonMessage: String(cString: text))
}

/// Called once per request when its request line is parsed, with the target as sent.
let requestLineLogged: @convention(c) (UnsafeMutableRawPointer?, UnsafePointer<CChar>?, OpaquePointer?)
    -> UnsafeMutableRawPointer? = { context, uri, connection in
    guard let context, let uri, let connection, let record = record(of: connection) else { return nil }
    server(context).connectionGuard.requestLineArrived(record, target: String(cString: uri))
    return nil
}

/// Leaves paths and query arguments as sent: `RequestFraming.parseTarget` decodes each
/// segment and argument exactly once, so an encoded `/` or NUL stays inside its segment.
let leaveEscaped: @convention(c) (UnsafeMutableRawPointer?, OpaquePointer?, UnsafeMutablePointer<CChar>?) -> Int = {
    _, _, text in
    guard let text else { return 0 }
    return strlen(text)
}

let accessHandler: MHD_AccessHandlerCallback = {
    context, connection, url, method, version, uploadData, uploadDataSize, requestState in
    guard let context, let connection, let url, let method, let uploadDataSize, let requestState else {
        return gatepass_mhd_no()
    }
    let server = server(context)
    // First call: headers are in, no body yet. The request's framing is decided now.
    guard let stateRaw = requestState.pointee else {
        let state = RequestState(connection: connection)
        requestState.pointee = Unmanaged.passRetained(state).toOpaque()
        // Counted before the stop's flag is read, while `beginStop` sets the flag before `stop`
        // reads the count: so a request is either refused here or waited for by the stop.
        server.inFlight.add(1, ordering: .sequentiallyConsistent)
        if server.isStopping {
            // A request begun after the stop began: 503 at once, and the connection closes, so
            // a kept-alive connection takes no more work while the requests in flight finish.
            server.inFlight.subtract(1, ordering: .sequentiallyConsistent)
            state.countedInFlight = false
            state.closeAfterAnswer = true
            return server.dispatch(connection: connection, method: method, state: state)
        }
        let record = record(of: connection)
        if let record { server.connectionGuard.move(record, to: .readingBody) }
        let headers = orderedHeaders(of: connection)
        let rawTarget = record.flatMap { server.connectionGuard.takeTarget($0) } ?? String(cString: url)
        var violation = RequestFraming.check(headers: headers, version: version.map { String(cString: $0) } ?? "")
        var target: RequestFraming.Target?
        switch RequestFraming.parseTarget(rawTarget) {
        case .success(let parsed): target = parsed
        case .failure(let problem): violation = violation ?? problem
        }
        if violation == nil, let length = headers.first(where: { $0.name.lowercased() == "content-length" }),
           let declared = Int(length.value.trimmingCharacters(in: .whitespaces)),
           declared > server.configuration.bodyLimit {
            // Answer now; libmicrohttpd then closes the connection instead of reading the body.
            state.bodyExceededLimit = true
        }
        state.headers = headers
        state.target = target ?? .unparsed
        state.malformation = violation?.reason
        if violation != nil || state.bodyExceededLimit {
            state.closeAfterAnswer = true
            return server.dispatch(connection: connection, method: method, state: state)
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
    return server.dispatch(connection: connection, method: method, state: state)
}

let completedHandler: MHD_RequestCompletedCallback = { context, connection, requestState, _ in
    guard let context else { return }
    let server = server(context)
    if let connection, let record = record(of: connection) { server.connectionGuard.move(record, to: .awaitingRequest) }
    guard let requestState, let stateRaw = requestState.pointee else { return }
    defer {
        Unmanaged<RequestState>.fromOpaque(stateRaw).release()
        requestState.pointee = nil
    }
    let state = Unmanaged<RequestState>.fromOpaque(stateRaw).takeUnretainedValue()
    state.lock.lock()
    state.connectionAlive = false
    state.lock.unlock()
    server.unanswered.withLock { _ = $0.requests.removeValue(forKey: ObjectIdentifier(state)) }
    if state.countedInFlight && !state.streaming { server.inFlight.subtract(1, ordering: .relaxed) }
}

/// Collects every header line in order, repeated names included (`MHD_get_connection_values`).
private final class HeaderCollector {
    var headers: [(name: String, value: String)] = []
}

private let collectHeader: MHD_KeyValueIterator = { context, _, key, value in
    guard let context, let key else { return gatepass_mhd_yes() }
    let collector = Unmanaged<HeaderCollector>.fromOpaque(context).takeUnretainedValue()
    collector.headers.append((String(cString: key), value.map { String(cString: $0) } ?? ""))
    return gatepass_mhd_yes()
}

private func orderedHeaders(of connection: OpaquePointer) -> [(name: String, value: String)] {
    let collector = HeaderCollector()
    withExtendedLifetime(collector) {
        _ = MHD_get_connection_values(connection, .HEADER_KIND, collectHeader,
                                      Unmanaged.passUnretained(collector).toOpaque())
    }
    return collector.headers
}

// MARK: - Dispatch and replies

extension HTTPServer {
    fileprivate func dispatch(connection: OpaquePointer, method: UnsafePointer<CChar>, state: RequestState) -> MHD_Result {
        let connectionRecord = record(of: connection)
        if let connectionRecord { connectionGuard.move(connectionRecord, to: .processing) }
        var byName: [String: String] = [:]
        for header in state.headers where byName[header.name.lowercased()] == nil {
            byName[header.name.lowercased()] = header.value
        }
        var request = HTTPRequest(method: String(cString: method), target: state.target, headers: byName,
                                  body: state.body, bodyExceededLimit: state.bodyExceededLimit,
                                  malformation: state.malformation)
        request.peerAddress = connectionRecord?.address
        state.body = []
        state.headers = []
        state.dispatched = true
        let stopping = unanswered.withLock { table -> Bool in
            table.requests[ObjectIdentifier(state)] = state
            return table.stopping
        }
        if stopping || !state.countedInFlight {
            state.closeAfterAnswer = true
            deliver(configuration.unansweredAtStop, to: state)
        } else {
            responder.respond(to: request) { [self] response in deliver(response, to: state) }
        }
        return queueOrSuspend(state, connection)
    }

    /// Hands `response` to the request's connection, once: a second answer (the responder's
    /// after `stop` answered, say) and an answer after the request completed are dropped.
    func deliver(_ response: HTTPResponse, to state: RequestState) {
        state.lock.lock()
        guard !state.answered, state.connectionAlive else {
            state.lock.unlock()
            return
        }
        state.answered = true
        state.response = response
        let mustResume = state.suspended
        state.suspended = false
        state.lock.unlock()
        unanswered.withLock { _ = $0.requests.removeValue(forKey: ObjectIdentifier(state)) }
        // libmicrohttpd then calls the access handler again, which queues the response. Safe
        // outside the lock: a suspended connection is neither read nor closed until resumed,
        // and only the one answer that cleared `suspended` resumes it.
        if mustResume, let connection = OpaquePointer(bitPattern: state.connectionAddress) {
            MHD_resume_connection(connection)
        }
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
            return Self.queue(response, closingConnection: state.closeAfterAnswer, on: connection)
        }
        state.suspended = true
        MHD_suspend_connection(connection)
        state.lock.unlock()
        return gatepass_mhd_yes()
    }

    /// Headers every answer carries, whatever the responder set.
    static func addCommonHeaders(_ response: HTTPResponse, closingConnection: Bool, to mhdResponse: OpaquePointer) {
        for header in response.headers {
            _ = MHD_add_response_header(mhdResponse, header.name, header.value)
        }
        if response.header("x-content-type-options") == nil {
            _ = MHD_add_response_header(mhdResponse, "X-Content-Type-Options", "nosniff")
        }
        // libmicrohttpd closes the connection after an answer that says so, so bytes left of a
        // refused request are never read as a next request.
        if closingConnection && response.header("connection") == nil {
            _ = MHD_add_response_header(mhdResponse, "Connection", "close")
        }
    }

    static func queue(_ response: HTTPResponse, closingConnection: Bool, on connection: OpaquePointer) -> MHD_Result {
        var body = response.body
        let mhdResponse = body.withUnsafeMutableBytes {
            MHD_create_response_from_buffer($0.count, $0.baseAddress, .RESPMEM_MUST_COPY)
        }
        guard let mhdResponse else { return gatepass_mhd_no() }
        defer { MHD_destroy_response(mhdResponse) }
        addCommonHeaders(response, closingConnection: closingConnection, to: mhdResponse)
        return MHD_queue_response(connection, UInt32(response.status), mhdResponse)
    }
}
