import CurlHTTP

// The libcurl implementation of `HTTPTransport`: the one file of GatePassClient that imports
// CurlHTTP. CurlSession itself conforms (rather than a wrapper type) so that callers keep
// handing `CurlSession(options:)` to `ClientCore` and `APIClient`; CurlHTTP knows nothing of
// the client.

extension CurlSession: HTTPTransport {
    public func perform(_ request: HTTPRequest) throws(HTTPTransportError) -> HTTPResponse {
        do {
            let response = try perform(CurlRequest(request))
            return HTTPResponse(status: response.status, headers: response.headers, body: response.body)
        } catch {
            throw HTTPTransportError(error)
        }
    }

    public func stream(_ request: HTTPRequest, idleTimeout: Duration, shouldStop: @escaping () -> Bool,
                       onResponse: @escaping (Int, [String: String]) -> Bool,
                       onData: @escaping ([UInt8]) -> Bool) throws(HTTPTransportError) {
        do {
            try stream(CurlRequest(request), idleTimeout: idleTimeout, shouldStop: shouldStop, onResponse: onResponse,
                       onData: onData)
        } catch {
            throw HTTPTransportError(error)
        }
    }

    /// A new libcurl handle with the same options: one `CurlSession` serialises its
    /// transfers under a lock, so two threads sharing one wait for each other.
    public func separateHandle() -> any HTTPTransport { CurlSession(options: options) }
}

extension CurlRequest {
    init(_ request: HTTPRequest) {
        self.init(method: request.method, url: request.url, headers: request.headers, body: request.body)
    }
}

extension HTTPTransportError {
    /// The same failure in the client's words; libcurl's code is kept in `.failed`.
    public init(_ error: TransportError) {
        switch error {
        case .cannotConnect(let url, let detail): self = .cannotConnect(url: url, detail: detail)
        case .timedOut(let url): self = .timedOut(url: url)
        case .tls(let url, let detail): self = .tls(url: url, detail: detail)
        case .failed(let url, let code, let detail): self = .failed(url: url, code: code, detail: detail)
        case .invalidURL(let url): self = .invalidURL(url)
        }
    }
}
