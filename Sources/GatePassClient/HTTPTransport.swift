import Foundation

// The client core's own HTTP vocabulary: everything in GatePassClient talks to `HTTPTransport`
// with these types, and only `CurlTransport.swift` knows libcurl. (The names carry "Client"
// because the HTTPServer module, which the client's tests also import, has `HTTPRequest`.)
// They mirror CurlHTTP's `CurlRequest`, `CurlResponse` and `TransportError` on purpose: the
// seam is that the client depends on these and an adapter maps, so libcurl can be swapped or
// faked without the client importing it.

/// One request as the client core sends it.
public struct HTTPRequest: Sendable {
    /// `GET`, `POST`, `DELETE` (`Endpoint.method.rawValue`, or what an outbox row stored).
    public var method: String
    /// The full URL, e.g. `https://gate.example.com/api/visitors/0190…`.
    public var url: String
    public var headers: [(name: String, value: String)]
    public var body: [UInt8]?

    public init(method: String, url: String, headers: [(name: String, value: String)] = [], body: [UInt8]? = nil) {
        self.method = method
        self.url = url
        self.headers = headers
        self.body = body
    }
}

/// An HTTP answer, whatever its status.
public struct HTTPResponse: Sendable {
    public var status: Int
    /// Header names in lower case; a repeated header keeps its last value.
    public var headers: [String: String]
    public var body: [UInt8]

    public init(status: Int, headers: [String: String], body: [UInt8]) {
        self.status = status
        self.headers = headers
        self.body = body
    }
}

/// Why a request got no HTTP answer at all; `ClientError.from` sorts it into the taxonomy.
public enum HTTPTransportError: Error, Sendable, Equatable, CustomStringConvertible {
    /// DNS failure, connection refused, host unreachable: the server cannot be reached.
    case cannotConnect(url: String, detail: String)
    /// Connected (or trying) but no complete answer in time.
    case timedOut(url: String)
    /// TLS failed: certificate not trusted, name mismatch, handshake error.
    case tls(url: String, detail: String)
    /// The connection broke mid-exchange, or another transfer error (`code` is the
    /// implementation's raw code, for logs).
    case failed(url: String, code: Int32, detail: String)
    /// The URL is malformed or uses a protocol other than http/https.
    case invalidURL(String)

    public var description: String {
        switch self {
        case .cannotConnect(let url, let detail): "cannot connect to \(url): \(detail)"
        case .timedOut(let url): "\(url) did not answer in time"
        case .tls(let url, let detail): "TLS failed for \(url): \(detail)"
        case .failed(let url, let code, let detail): "transfer with \(url) failed (code \(code)): \(detail)"
        case .invalidURL(let url): "\(url) is not an http:// or https:// URL"
        }
    }
}

/// Anything that performs the client core's HTTP requests: libcurl in production
/// (`CurlSession`, see CurlTransport.swift), a fake in unit tests. It is passed in to
/// `ClientCore`, `APIClient` and `EventStreamConsumer`; none of them makes its own.
public protocol HTTPTransport: Sendable {
    /// Performs `request` and returns the answer, whatever its status.
    func perform(_ request: HTTPRequest) throws(HTTPTransportError) -> HTTPResponse

    /// Performs a streaming request (server-sent events): `onResponse` gets the status and
    /// headers and returns false to stop; `onData` gets each chunk of the body as it arrives
    /// and returns false to stop. No byte for `idleTimeout` ends the transfer with an error;
    /// `shouldStop` is asked about once a second even while no byte arrives, and a stop ends
    /// the call without an error. The request timeout does not apply.
    func stream(_ request: HTTPRequest, idleTimeout: Duration, shouldStop: @escaping () -> Bool,
                onResponse: @escaping (Int, [String: String]) -> Bool,
                onData: @escaping ([UInt8]) -> Bool) throws(HTTPTransportError)

    /// A transport with the same settings whose requests never wait for this one's, for
    /// work on another thread (the background outbox drain, the event stream): a request
    /// hanging on one must not hold a person's request on the other.
    func separateHandle() -> any HTTPTransport
}

extension HTTPTransport {
    /// For transports that cannot stream (test fakes): performs the request and hands the
    /// whole body over as one chunk.
    public func stream(_ request: HTTPRequest, idleTimeout: Duration, shouldStop: @escaping () -> Bool,
                       onResponse: @escaping (Int, [String: String]) -> Bool,
                       onData: @escaping ([UInt8]) -> Bool) throws(HTTPTransportError) {
        let response = try perform(request)
        guard !shouldStop(), onResponse(response.status, response.headers), !response.body.isEmpty else { return }
        _ = onData(response.body)
    }
}
