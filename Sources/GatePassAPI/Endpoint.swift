import Foundation
import GatePassCore

/// The HTTP methods the API uses.
public enum HTTPMethod: String, Sendable, Hashable, CaseIterable {
    case get = "GET"
    case post = "POST"
    case patch = "PATCH"
    case delete = "DELETE"
}

/// One endpoint of the contract (api.md): method, path pattern and the domain action it
/// performs. The server serves each once and the client builds its requests from the same
/// values, so a path is spelled in exactly one place.
///
///     Endpoint.visitorsCancel.path(visitorId)   // "/api/visitors/0190…/cancel"
public struct Endpoint: Sendable, Hashable, CustomStringConvertible {
    public let method: HTTPMethod
    /// The path with `:name` for each parameter, as api.md writes it.
    public let pathPattern: String
    public let action: Action

    public init(_ method: HTTPMethod, _ pathPattern: String, _ action: Action) {
        precondition(pathPattern.hasPrefix("/") && !pathPattern.contains(" ") && !pathPattern.contains("?"),
                     "\(pathPattern) is not a path pattern")
        self.method = method
        self.pathPattern = pathPattern
        self.action = action
    }

    /// `METHOD /path/:pattern`: how logs, metrics and tests name the endpoint.
    public var name: String { "\(method.rawValue) \(pathPattern)" }
    public var description: String { name }

    /// The pattern's segments; a parameter is written `:name`.
    public var patternSegments: [Substring] { pathPattern.split(separator: "/", omittingEmptySubsequences: false).dropFirst().map { $0 } }

    /// The names of the path parameters, in order.
    public var parameterNames: [String] { patternSegments.filter { $0.hasPrefix(":") }.map { String($0.dropFirst()) } }

    /// The path with each parameter replaced, in order, by a percent-encoded value, and the
    /// query (absent values left out) appended.
    /// - Precondition: exactly one value per parameter (a wrong count is a programming error).
    public func path(_ values: String..., query: [(String, String?)] = []) -> String {
        path(values: values, query: query)
    }

    /// `path(_:query:)` with the values in an array, for code that forwards them.
    public func path(values: [String], query: [(String, String?)] = []) -> String {
        var remaining = values[...]
        let segments = patternSegments.map { segment -> String in
            guard segment.hasPrefix(":") else { return String(segment) }
            guard let value = remaining.popFirst() else { preconditionFailure("\(name) needs a value for \(segment)") }
            return Self.encodeSegment(value)
        }
        precondition(remaining.isEmpty, "\(name) takes \(parameterNames.count) parameters, not \(values.count)")
        return "/" + segments.joined(separator: "/") + Self.encodeQuery(query)
    }

    /// A path segment with every character that would end or split it percent-encoded.
    public static func encodeSegment(_ value: String) -> String {
        var allowed = CharacterSet.urlPathAllowed
        allowed.remove(charactersIn: "/?#")
        return value.addingPercentEncoding(withAllowedCharacters: allowed) ?? value
    }

    /// `?name=value&…` for the present values, or "" when none is.
    public static func encodeQuery(_ items: [(String, String?)]) -> String {
        let present = items.compactMap { name, value in value.map { (name, $0) } }
        guard !present.isEmpty else { return "" }
        var allowed = CharacterSet.urlQueryAllowed
        allowed.remove(charactersIn: "&=+?#")
        return "?" + present.map { "\($0.0)=\($0.1.addingPercentEncoding(withAllowedCharacters: allowed) ?? "")" }
            .joined(separator: "&")
    }
}
