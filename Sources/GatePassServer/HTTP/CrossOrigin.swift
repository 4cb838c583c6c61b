import Foundation
import GatePassCore
import HTTPServer

/// A web origin as a browser sends it in `Origin`: `scheme://host[:port]`, in lower case,
/// without the scheme's default port (the URL standard's origin serialization).
struct WebOrigin: Hashable, Sendable, CustomStringConvertible {
    /// The serialization, such as `https://desk.example.com` or `http://127.0.0.1:5173`.
    let text: String
    var description: String { text }

    /// Reads an entry of `corsOrigins`. Scheme and host are lower-cased and a default port
    /// dropped, as browsers do, so the result compares equal to the `Origin` a browser sends;
    /// anything else that is not `http[s]://host[:port]` is refused, never guessed at.
    /// - Throws: `ConfigurationError` naming the entry (made visible, cut short) and what is wrong with it.
    init(configured text: String) throws(ConfigurationError) {
        switch Self.serialization(of: text) {
        case .success(let serialized): self.text = serialized
        case .failure(let problem):
            throw ConfigurationError(message: "corsOrigins: \(TerminalText.visible(text).prefix(200).debugDescription) \(problem.reason)")
        }
    }

    private struct Problem: Error {
        var reason: String
    }

    /// The origin's serialization, or why `text` is not one.
    private static func serialization(of text: String) -> Result<String, Problem> {
        func problem(_ reason: String) -> Result<String, Problem> { .failure(Problem(reason: reason)) }
        guard text.utf8.count <= 300 else { return problem("is longer than any origin") }
        guard text.utf8.allSatisfy({ (0x21...0x7E).contains($0) }) else {
            return problem("must be printable ASCII without spaces (write an international host name in its xn-- form)")
        }
        if text == "null" { return problem("is the origin of sandboxed and local pages: anyone can send it, so it cannot be trusted") }
        if text == "*" { return problem("is not supported: list each origin whose pages may call the API") }
        guard let separator = text.range(of: "://") else { return problem("is not scheme://host[:port]") }
        let scheme = text[..<separator.lowerBound].lowercased()
        guard scheme == "http" || scheme == "https" else { return problem("must begin with http:// or https://") }
        let authority = text[separator.upperBound...]
        if authority.contains("/") { return problem("must not have a path, not even a trailing /") }
        if authority.contains("?") || authority.contains("#") { return problem("must not have a query or a fragment") }
        if authority.contains("@") { return problem("must not carry a user name or password") }

        let host: String
        var portText: Substring?
        if authority.hasPrefix("[") {
            guard let close = authority.firstIndex(of: "]") else { return problem("has an IPv6 address without its closing ]") }
            guard let address = canonicalIPv6(authority[authority.index(after: authority.startIndex)..<close]) else {
                return problem("has an IPv6 address that is not one, or not written as browsers write it (such as [::1])")
            }
            host = "[" + address + "]"
            let rest = authority[authority.index(after: close)...]
            if !rest.isEmpty {
                guard rest.hasPrefix(":") else { return problem("has text after its IPv6 address") }
                portText = rest.dropFirst()
            }
        } else {
            let parts = authority.split(separator: ":", omittingEmptySubsequences: false)
            guard parts.count <= 2 else { return problem("has more than one : after the host") }
            host = parts[0].lowercased()
            if parts.count == 2 { portText = parts[1] }
            if let reason = hostProblem(host) { return problem(reason) }
        }
        var port = ""
        if let portText {
            guard (1...5).contains(portText.count), portText.allSatisfy(\.isASCIIDigit), let number = Int(portText),
                  (1...65_535).contains(number)
            else { return problem("has a port that is not a number from 1 to 65535") }
            let isDefault = (scheme == "http" && number == 80) || (scheme == "https" && number == 443)
            if !isDefault { port = ":\(number)" }
        }
        return .success(scheme + "://" + host + port)
    }

    /// Why `host` (lower case) is not a host name or IPv4 address a browser would send, or nil.
    private static func hostProblem(_ host: String) -> String? {
        guard !host.isEmpty else { return "has no host" }
        guard host.utf8.count <= 253 else { return "has a host name longer than 253 characters" }
        let labels = host.split(separator: ".", omittingEmptySubsequences: false)
        // The URL standard reads a host whose last label is a number as an IPv4 address (and
        // rewrites `127.1` as `127.0.0.1`): only the four-number form compares equal.
        if let last = labels.last, !last.isEmpty, last.allSatisfy(\.isASCIIDigit) {
            let isDottedQuad = labels.count == 4 && labels.allSatisfy { label in
                (1...3).contains(label.count) && label.allSatisfy(\.isASCIIDigit) && Int(label)! <= 255
                    && (label == "0" || !label.hasPrefix("0"))
            }
            return isDottedQuad ? nil : "has a host that is neither a name nor an IPv4 address of four numbers 0–255"
        }
        for label in labels {
            guard (1...63).contains(label.count) else { return "has an empty or over-long part in its host name" }
            guard label.allSatisfy({ $0.isASCIILetterOrDigit || $0 == "-" || $0 == "_" }),
                  label.first != "-", label.last != "-"
            else { return "has a host name with characters other than letters, digits, - and _" }
        }
        return nil
    }

    /// The RFC 5952 form of an IPv6 address (what browsers write, for addresses without an
    /// embedded IPv4 part), or nil for anything else.
    private static func canonicalIPv6(_ text: Substring) -> String? {
        guard !text.contains("."), text.count <= 39 else { return nil }
        var address = in6_addr()
        guard inet_pton(AF_INET6, String(text), &address) == 1 else { return nil }
        var buffer = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN))
        guard inet_ntop(AF_INET6, &address, &buffer, socklen_t(buffer.count)) != nil else { return nil }
        let canonical = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        // An IPv4-mapped address comes back dotted, which is not how the URL standard writes it.
        return canonical.contains(".") ? nil : canonical
    }
}

private extension Character {
    var isASCIIDigit: Bool { isASCII && isNumber }
    var isASCIILetterOrDigit: Bool { isASCII && (isLetter || isNumber) }
}

/// Cross-origin access for pages of the configured origins (api.md "Browser clients"), all in
/// one place: the application answers a preflight with `preflightAnswer` and passes every
/// answer, whatever produced it (a handler, an error, the event stream), through `decorate`.
///
/// Only `/api/` is covered. The request's `Origin` is compared byte for byte with the listed
/// origins and never copied into an answer: what an answer names is the configured text, so
/// no header value (however long, with whatever bytes) reaches a response.
struct CrossOriginPolicy: Sendable {
    static let allowedHeaders = "Authorization, Content-Type, Idempotency-Key, Last-Event-ID"
    static let exposedHeaders = "Retry-After, Idempotent-Replayed"
    /// How long a browser may keep a preflight's answer (Chromium keeps at most 2 hours, Firefox 24).
    static let maxAgeSeconds = 600

    private let origins: Set<String>

    /// - Precondition: every origin is a `WebOrigin` (`ServerConfiguration.validate` ran).
    init(configured: [String]) {
        origins = Set(configured.map { text in
            guard let origin = try? WebOrigin(configured: text) else {
                preconditionFailure("corsOrigins holds \(text.debugDescription): the configuration was not validated")
            }
            return origin.text
        })
    }

    private static func covers(_ request: HTTPRequest) -> Bool { request.path.hasPrefix("/api/") }

    /// The request's origin when it is one of the listed ones.
    private func listedOrigin(of request: HTTPRequest) -> String? {
        guard let origin = request.header("origin"), origins.contains(origin) else { return nil }
        return origin
    }

    /// The answer to a preflight: `OPTIONS` from a listed origin on an `/api/` path that routes
    /// answer, with `methods` those routes' methods. nil for every other request, which is
    /// routed as usual — so an `OPTIONS` from an unlisted origin, or on a path no route
    /// answers, gets the router's 405 or 404 (and only a listed origin's carries CORS headers).
    func preflightAnswer(_ request: HTTPRequest, methods: ([String]) -> [String]) -> HTTPResponse? {
        guard request.method == "OPTIONS", Self.covers(request), listedOrigin(of: request) != nil else { return nil }
        let allowed = methods(request.pathSegments)
        guard !allowed.isEmpty else { return nil }
        return HTTPResponse(status: 204, headers: [
            ("Access-Control-Allow-Methods", allowed.joined(separator: ", ")),
            ("Access-Control-Allow-Headers", Self.allowedHeaders),
            ("Access-Control-Max-Age", String(Self.maxAgeSeconds)),
        ])
    }

    /// `response` with what its request's origin is owed. With origins configured, every `/api/`
    /// answer says `Vary: Origin` (a cache must not hand one origin's answer to another, and
    /// the Fetch standard asks for it on answers without CORS headers too); an answer to a
    /// listed origin also names it in `Access-Control-Allow-Origin` and exposes
    /// `Retry-After` and `Idempotent-Replayed` to its script.
    func decorate(_ response: HTTPResponse, for request: HTTPRequest) -> HTTPResponse {
        guard !origins.isEmpty, Self.covers(request) else { return response }
        var decorated = response
        // A second Vary field adds to the first (RFC 9110 §5.3): no handler's Vary is lost.
        decorated.headers.append(("Vary", "Origin"))
        guard let origin = listedOrigin(of: request) else { return decorated }
        decorated.headers.append(("Access-Control-Allow-Origin", origin))
        decorated.headers.append(("Access-Control-Expose-Headers", Self.exposedHeaders))
        return decorated
    }
}
