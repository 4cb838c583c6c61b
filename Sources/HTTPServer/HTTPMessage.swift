/// One HTTP request, fully read (bodies are bounded by the server's body limit).
public struct HTTPRequest: Sendable {
    public var method: String
    /// The path without the query string, as sent (not percent-decoded).
    public var path: String
    /// The path's segments after the leading `/`, each percent-decoded exactly once: an
    /// encoded `/` or NUL is part of its segment, never a separator or an end.
    public var pathSegments: [String]
    /// The query string as sent, without `?` (not decoded); empty when there is none.
    public var rawQuery: String
    /// Query arguments, each decoded once (`+` is a space). A repeated key keeps its first value.
    public var query: [String: String]
    /// Header names in lower case.
    public var headers: [String: String]
    public var body: [UInt8]
    /// True when the body was larger than the server's limit; `body` is then empty and the
    /// rest of the upload was discarded, never buffered.
    public var bodyExceededLimit: Bool
    /// Why the request's head breaks `RequestFraming`'s rules, when it does: the request must
    /// be refused (400); its answer closes the connection and no body was read.
    public var malformation: String?
    /// The IPv4 address (network byte order) of the connection's peer; nil when not known
    /// (a request made in a test). Behind a reverse proxy it is the proxy's.
    public var peerAddress: UInt32?

    public init(method: String, path: String, query: [String: String] = [:], headers: [String: String] = [:],
                body: [UInt8] = [], bodyExceededLimit: Bool = false) {
        self.method = method
        self.path = path
        pathSegments = path.split(separator: "/", omittingEmptySubsequences: false).dropFirst().map(String.init)
        rawQuery = ""
        self.query = query
        self.headers = headers
        self.body = body
        self.bodyExceededLimit = bodyExceededLimit
    }

    /// A request as the server parsed it.
    public init(method: String, target: RequestFraming.Target, headers: [String: String], body: [UInt8],
                bodyExceededLimit: Bool, malformation: String?) {
        self.method = method
        path = target.rawPath
        pathSegments = target.segments
        rawQuery = target.rawQuery
        query = target.query
        self.headers = headers
        self.body = body
        self.bodyExceededLimit = bodyExceededLimit
        self.malformation = malformation
    }

    public func header(_ name: String) -> String? { headers[name.lowercased()] }
}

/// One HTTP response.
public struct HTTPResponse: Sendable {
    public var status: Int
    public var headers: [(name: String, value: String)]
    public var body: [UInt8]
    /// A body produced over time instead of `body` (server-sent events): sent chunked, for as
    /// long as the client stays and the stream does not end.
    public var stream: (any HTTPStreamBody)?

    public init(status: Int, headers: [(name: String, value: String)] = [], body: [UInt8] = [],
                stream: (any HTTPStreamBody)? = nil) {
        self.status = status
        self.headers = headers
        self.body = body
        self.stream = stream
    }

    public func header(_ name: String) -> String? {
        headers.first { $0.name.lowercased() == name.lowercased() }?.value
    }
}

/// A response body that is written as it becomes ready, without holding a thread.
///
/// While the body has nothing to send its connection is suspended; `wake` resumes it. So an
/// idle stream costs a socket and some memory, never a pool thread.
public protocol HTTPStreamBody: AnyObject, Sendable {
    /// Called once, when the response starts. Call `wake` after new bytes are ready, never
    /// while holding a lock that `read` takes.
    func start(wake: @escaping @Sendable () -> Void)
    /// Copies ready bytes into `buffer` and returns how many; 0 when there is nothing yet;
    /// nil when the stream is over (the server then ends the response).
    func read(into buffer: UnsafeMutableRawBufferPointer) -> Int?
    /// The response is finished: the client went away, the stream ended or the server stopped.
    func finished()
}

/// What the server calls for each request, on one of its pool threads.
public protocol HTTPResponder: Sendable {
    /// Answers `request` by calling `reply` exactly once, from any thread, at once or later.
    ///
    /// A responder that must wait (for a database commit, say) should return and call
    /// `reply` when done: the connection is then suspended and the pool thread serves other
    /// connections meanwhile.
    func respond(to request: HTTPRequest, reply: @escaping @Sendable (HTTPResponse) -> Void)
}

/// A failure to start or run the HTTP server.
public struct HTTPServerError: Error, Sendable, CustomStringConvertible {
    public var message: String
    public var description: String { message }
}
