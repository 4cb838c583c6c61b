import GatePassAPI
import HTTPServer

/// One endpoint as the server serves it: the contract's endpoint, how its work runs, and
/// its handler. Controllers declare these in one table each (`GatePassApplication.routes`);
/// the router is built from nothing else.
struct Route: Sendable {
    enum Work: Sendable {
        /// On a reader connection, after the session check on the same connection. The
        /// cached answer, when the route has one, is tried first when the session is cached
        /// too: a hit needs no transaction at all.
        case read(@Sendable (GatePassApplication, GatePassApplication.Call, any Transaction) throws -> HTTPResponse,
                  cachedAnswer: (@Sendable (GatePassApplication, GatePassApplication.Call) throws -> HTTPResponse?)?)
        /// In the writer's next durable group commit, with idempotency recorded in the same
        /// transaction; the answer goes out after the commit.
        case write(@Sendable (GatePassApplication, GatePassApplication.Call, any Transaction) throws -> HTTPResponse)
        /// Authenticated, then answers by itself outside any transaction, when it is ready.
        case deferred(@Sendable (GatePassApplication, GatePassApplication.Call,
                                 @escaping @Sendable (HTTPResponse) -> Void) throws -> Void)
        /// Answered from the request alone: no session is looked up (the route has its own credential).
        case sessionless(@Sendable (GatePassApplication, HTTPRequest) throws -> HTTPResponse)
    }

    /// How a write's `Idempotency-Key` recognises and answers a repeat of its request.
    struct Idempotency: Sendable {
        /// The part of the body the fingerprint covers; nil: all of it (api.md's default).
        var fingerprintedBody: (@Sendable ([UInt8]) -> [UInt8])?
        /// What a recognised repeat answers, given the stored answer; nil: the stored answer.
        var replay: (@Sendable (GatePassApplication, GatePassApplication.Call, HTTPResponse, any Transaction) throws -> HTTPResponse)?

        static let standard = Idempotency(fingerprintedBody: nil, replay: nil)
    }

    let endpoint: Endpoint
    let work: Work
    var idempotency = Idempotency.standard

    static func read(_ endpoint: Endpoint,
                     cachedAnswer: (@Sendable (GatePassApplication, GatePassApplication.Call) throws -> HTTPResponse?)? = nil,
                     _ handler: @escaping @Sendable (GatePassApplication, GatePassApplication.Call, any Transaction) throws -> HTTPResponse)
        -> Route {
        precondition(endpoint.method == .get, "\(endpoint) is read on a reader connection, so it must be a GET")
        return Route(endpoint: endpoint, work: .read(handler, cachedAnswer: cachedAnswer))
    }

    static func write(_ endpoint: Endpoint, idempotency: Idempotency = .standard,
                      _ handler: @escaping @Sendable (GatePassApplication, GatePassApplication.Call, any Transaction) throws -> HTTPResponse)
        -> Route {
        precondition(endpoint.method != .get, "\(endpoint) writes, so it must not be a GET")
        return Route(endpoint: endpoint, work: .write(handler), idempotency: idempotency)
    }

    static func deferred(_ endpoint: Endpoint,
                         _ handler: @escaping @Sendable (GatePassApplication, GatePassApplication.Call,
                                                         @escaping @Sendable (HTTPResponse) -> Void) throws -> Void) -> Route {
        Route(endpoint: endpoint, work: .deferred(handler))
    }

    static func sessionless(_ endpoint: Endpoint,
                            _ handler: @escaping @Sendable (GatePassApplication, HTTPRequest) throws -> HTTPResponse) -> Route {
        Route(endpoint: endpoint, work: .sessionless(handler))
    }
}
