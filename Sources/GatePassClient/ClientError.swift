
/// The one error taxonomy of the client core; everything above switches on it.
public enum ClientError: Error, Sendable, Equatable, CustomStringConvertible {
    /// No connection to the server (refused, unreachable, DNS). Mutations queue.
    case offline(String)
    /// The server or the network failed for now (5xx, timeout, a broken connection). Retry later.
    case transient(status: Int?, message: String)
    /// 401: the session is over; log in again.
    case unauthorized(String)
    /// 401 `REVOKED`: an admin revoked this kiosk's scanner token or retired its checkpoint.
    /// Final: the token is not renewed with a login; the gate waits for a new enrolment.
    case revoked(String)
    /// 429: the server asks to wait (`Retry-After`, when it sent one) and send again: a
    /// mutation stays queued at least that long, never dead-lettered.
    case rateLimited(retryAfterSeconds: Int?, message: String)
    /// Any other 4xx: the server refused this request for good, with its error code.
    case permanent(status: Int, code: String, message: String)
    /// The server answered something this client cannot read; names the field.
    case decoding(String)
    /// A problem with local state (the state folder, the state file, a missing login).
    case local(String)

    public var description: String {
        switch self {
        case .offline(let detail): "the server is unreachable (\(detail))"
        case .transient(let status, let message): status.map { "the server failed (\($0)): \(message)" } ?? message
        case .unauthorized(let message): "not logged in: \(message)"
        case .revoked(let message): "signed out by an admin: \(message)"
        case .rateLimited(let seconds, let message):
            "the server asks to wait\(seconds.map { " \($0) s" } ?? ""): \(message)"
        case .permanent(_, let code, let message): "\(code): \(message)"
        case .decoding(let detail): "unexpected answer from the server: \(detail)"
        case .local(let message): message
        }
    }

    /// Whether a mutation that failed this way should stay queued and be retried.
    public var isRetryable: Bool {
        switch self {
        case .offline, .transient, .rateLimited: true
        case .unauthorized, .revoked, .permanent, .decoding, .local: false
        }
    }

    static func from(_ error: HTTPTransportError) -> ClientError {
        switch error {
        case .cannotConnect(_, let detail): .offline(detail)
        case .timedOut(let url): .transient(status: nil, message: "\(url) did not answer in time")
        case .tls(_, let detail): .permanent(status: 0, code: "TLS", message: detail)
        case .failed(_, _, let detail): .transient(status: nil, message: detail)
        case .invalidURL(let url): .local("\(url) is not an http:// or https:// URL")
        }
    }
}
