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

    /// A route's path split once; the route itself is looked up by index only when it
    /// matches, so the per-request scan copies no strings or closures.
    private struct Pattern: Sendable {
        var routeIndex: Int
        var method: HTTPMethod
        /// nil for a `:parameter` segment, which matches any segment.
        var literals: [Substring?]
        var parameterNames: [String?]
        var literalCount: Int
    }

    private let routes: [Route]
    private let patterns: [Pattern]

    /// - Precondition: no two routes share a method and path (a table error, found at start).
    init(routes: [Route]) {
        let names = routes.map(\.endpoint.name)
        precondition(Set(names).count == names.count, "a route is declared twice: \(names)")
        self.routes = routes
        patterns = routes.enumerated().map { index, route in
            let segments = route.endpoint.pathPattern.split(separator: "/")
            return Pattern(routeIndex: index, method: route.endpoint.method,
                           literals: segments.map { $0.hasPrefix(":") ? nil : $0 },
                           parameterNames: segments.map { $0.hasPrefix(":") ? String($0.dropFirst()) : nil },
                           literalCount: segments.filter { !$0.hasPrefix(":") }.count)
        }.sorted { $0.literalCount > $1.literalCount }
    }

    /// Matches decoded path segments (`HTTPRequest.pathSegments`: each decoded exactly once,
    /// so an encoded `/` is part of its segment and never a separator).
    func match(method: String, segments: [String]) -> Match {
        let requested = HTTPMethod(rawValue: method)
        let isHead = method == "HEAD"
        var allowed: [String] = []
        var found: Match?
        forEachPattern(matching: segments) { pattern in
            if pattern.method == requested || (isHead && pattern.method == .get) {
                var parameters: [String: String] = [:]
                for (name, actual) in zip(pattern.parameterNames, segments) {
                    if let name { parameters[name] = actual }
                }
                found = .found(routes[pattern.routeIndex], parameters: parameters)
                return false
            }
            if !allowed.contains(pattern.method.rawValue) { allowed.append(pattern.method.rawValue) }
            return true
        }
        return found ?? (allowed.isEmpty ? .notFound : .methodNotAllowed(allowed: allowed))
    }

    /// The methods of every route whose pattern matches these segments (what a CORS preflight
    /// may be allowed), most specific pattern first; empty when no route answers the path.
    func methods(segments: [String]) -> [String] {
        var methods: [String] = []
        forEachPattern(matching: segments) { pattern in
            if !methods.contains(pattern.method.rawValue) { methods.append(pattern.method.rawValue) }
            return true
        }
        return methods
    }

    /// Calls `body` with each pattern that matches `segments`, most literal segments first,
    /// until it returns false.
    private func forEachPattern(matching segments: [String], _ body: (Pattern) -> Bool) {
        // A trailing slash or an empty segment never matches: paths are exact.
        guard !segments.contains(where: \.isEmpty) else { return }
        for index in patterns.indices where patterns[index].literals.count == segments.count {
            let pattern = patterns[index]
            guard zip(pattern.literals, segments).allSatisfy({ literal, actual in literal.map { $0 == actual } ?? true })
            else { continue }
            if !body(pattern) { return }
        }
    }
}
