import Foundation
import GatePassCore
import HTTPServer

/// An error the API answers with its own status and the JSON error shape of api.md.
/// Lower layers throw their own errors; `APIError.from` translates them here, so no layer
/// below the API knows about HTTP.
public struct APIError: Error, Sendable, Equatable, CustomStringConvertible {
    public enum Code: String, Sendable {
        case badRequest = "BAD_REQUEST"
        case unauthorized = "UNAUTHORIZED"
        /// 401: an admin revoked this kiosk's credential (or retired its checkpoint): do not renew.
        case revoked = "REVOKED"
        case forbidden = "FORBIDDEN"
        case notFound = "NOT_FOUND"
        case methodNotAllowed = "METHOD_NOT_ALLOWED"
        case conflict = "CONFLICT"
        /// 409: the visitor matches the blocklist and the request did not confirm it (api.md "Blocklist").
        case blocklistMatch = "BLOCKLIST_MATCH"
        case idempotencyKeyReused = "IDEMPOTENCY_KEY_REUSED"
        case payloadTooLarge = "PAYLOAD_TOO_LARGE"
        case rateLimited = "RATE_LIMITED"
        case `internal` = "INTERNAL"
        case unavailable = "UNAVAILABLE"

        var status: Int {
            switch self {
            case .badRequest: 400
            case .unauthorized, .revoked: 401
            case .forbidden: 403
            case .notFound: 404
            case .methodNotAllowed: 405
            case .conflict, .blocklistMatch: 409
            case .idempotencyKeyReused: 422
            case .payloadTooLarge: 413
            case .rateLimited: 429
            case .internal: 500
            case .unavailable: 503
            }
        }
    }

    public var code: Code
    public var message: String
    public var headers: [String: String] = [:]
    /// `BLOCKLIST_MATCH`'s fields beside the code and message: `blocked` (always true), and the
    /// matching entry's id for OWNER/ADMIN only. Never the entry's reason.
    public var blocked: Bool?
    public var entryId: String?

    public var status: Int { code.status }
    public var description: String { "\(code.rawValue): \(message)" }

    static func badRequest(_ message: String) -> APIError { APIError(code: .badRequest, message: message) }
    static func unauthorized(_ message: String = "a valid token is required") -> APIError {
        APIError(code: .unauthorized, message: message)
    }
    static func forbidden(_ message: String = "this credential may not call this route") -> APIError {
        APIError(code: .forbidden, message: message)
    }
    static func notFound(_ what: String) -> APIError { APIError(code: .notFound, message: "\(what) not found") }
    static func conflict(_ message: String) -> APIError { APIError(code: .conflict, message: message) }
    /// A registration of a visitor who matches the blocklist (api.md "Blocklist").
    /// - Parameter entryId: the matching entry, given only to OWNER/ADMIN.
    static func blocklistMatch(_ message: String, entryId: String?) -> APIError {
        APIError(code: .blocklistMatch, message: message, blocked: true, entryId: entryId)
    }
    static func `internal`(_ message: String) -> APIError { APIError(code: .internal, message: message) }
    /// 503 with `Retry-After` (api.md: shutting down, database busy or not writable).
    /// What a request still waiting when the server stops is answered.
    static var serverStopping: APIError { .unavailable("the server is stopping; try again shortly", retryAfter: 5) }
    static func unavailable(_ message: String, retryAfter seconds: Int = 1) -> APIError {
        APIError(code: .unavailable, message: message, headers: ["Retry-After": String(max(1, seconds))])
    }
    static func rateLimited(retryAfter seconds: Int, _ message: String) -> APIError {
        APIError(code: .rateLimited, message: message, headers: ["Retry-After": String(max(1, seconds))])
    }

    /// The translation of any error into the API's terms. Unknown errors become a 500 with a
    /// generic message; the caller logs the details.
    static func from(_ error: any Error) -> APIError {
        switch error {
        case let error as APIError: return error
        case let error as DecisionConflict: return .conflict(error.description)
        case let error as RevokedCredential: return APIError(code: .revoked, message: error.reason.message)
        case let error as QRPayloadError: return .badRequest(error.description)
        case is DecodingError: return .badRequest(JSONBody.describe(error))
        case let error as any DatabaseFailure where error.isClosing:
            return .unavailable("the server is stopping; the change was not made; try again shortly")
        // Another connection holds the lock past the busy timeout: worth a retry, not a bug.
        case let error as any DatabaseFailure where error.isBusy: return .unavailable("the database is busy; retry in a moment")
        // Read-only, damaged or failing storage: the server's fault, not the request's, and
        // lasting (`StorageHealth`) — the operator has the cause in the log.
        case let error as any DatabaseFailure where error.isUnwritable:
            return .unavailable("the database cannot be written; the server's log says why", retryAfter: 30)
        default: return .internal("internal error")
        }
    }

    var response: HTTPResponse {
        struct Body: Encodable {
            struct Detail: Encodable { var code: String; var message: String; var blocked: Bool?; var entryId: String? }
            var error: Detail
        }
        // A message may quote what the client sent (a method, a name): clients print it, so
        // its controls and invisible characters are spelled out here, once for every error.
        var response = JSONBody.response(status: status,
                                         Body(error: .init(code: code.rawValue, message: TerminalText.visible(message),
                                                           blocked: blocked, entryId: entryId)))
        for (name, value) in headers.sorted(by: { $0.key < $1.key }) { response.headers.append((name, value)) }
        return response
    }
}

extension APIError {
    /// A refused user change: 403 for a rule of who may do what, 409 for the last OWNER.
    /// (In an extension: an initializer in the struct's body would hide the memberwise one.)
    init(_ violation: UserRuleViolation) {
        switch violation {
        case .forbidden(let message): self.init(code: .forbidden, message: message)
        case .conflict(let message): self.init(code: .conflict, message: message)
        }
    }
}
