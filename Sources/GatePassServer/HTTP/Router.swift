import GatePassAPI

/// Matches a method and path to one of the served routes, with its path parameters.
///
/// Literal segments win over parameters (`/api/visitors/admin-me` is not visitor
/// "admin-me"). A path that matches with another method gives 405 with the allowed methods.
struct Router: Sendable {
    enum Match: Sendable {
        case found(Route, parameters: [String: String])
        case methodNotAllowed(allowed: [String])
        case notFound
    }

    private struct Pattern: Sendable {
        var route: Route
        var segments: [Substring]
        var literalCount: Int
    }

    private let patterns: [Pattern]

    /// - Precondition: no two routes share a method and path (a table error, found at start).
    init(routes: [Route]) {
        let names = routes.map(\.endpoint.name)
        precondition(Set(names).count == names.count, "a route is declared twice: \(names)")
        patterns = routes.map { route in
            let segments = route.endpoint.pathPattern.split(separator: "/")
            return Pattern(route: route, segments: segments, literalCount: segments.filter { !$0.hasPrefix(":") }.count)
        }.sorted { $0.literalCount > $1.literalCount }
    }

    /// Matches decoded path segments (`HTTPRequest.pathSegments`: each decoded exactly once,
    /// so an encoded `/` is part of its segment and never a separator).
    func match(method: String, segments: [String]) -> Match {
        // A trailing slash or an empty segment never matches: paths are exact.
        guard !segments.contains(where: \.isEmpty) else { return .notFound }
        var allowed: [String] = []
        for pattern in patterns where pattern.segments.count == segments.count {
            var parameters: [String: String] = [:]
            var matches = true
            for (expected, actual) in zip(pattern.segments, segments) {
                if expected.hasPrefix(":") {
                    parameters[String(expected.dropFirst())] = actual
                } else if expected != actual {
                    matches = false
                    break
                }
            }
            guard matches else { continue }
            let patternMethod = pattern.route.endpoint.method.rawValue
            if patternMethod == method || (method == "HEAD" && pattern.route.endpoint.method == .get) {
                return .found(pattern.route, parameters: parameters)
            }
            if !allowed.contains(patternMethod) { allowed.append(patternMethod) }
        }
        return allowed.isEmpty ? .notFound : .methodNotAllowed(allowed: allowed)
    }
}
