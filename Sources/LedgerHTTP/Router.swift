/// A pure table from (method, path pattern) to a route name and path parameters.
///
/// Patterns are literal segments and `{name}` parameters, e.g. "/v1/orders/{no}/events".
/// Route names double as metric labels, so they stay few and fixed.
public struct Router: Sendable {
    /// One registered route.
    public struct Route: Sendable, Equatable {
        public let method: String
        public let pattern: String
        public let name: String
        fileprivate let segments: [Segment]
    }

    fileprivate enum Segment: Sendable, Equatable {
        case literal(String)
        case parameter(String)
    }

    /// The outcome of matching a request line.
    public enum Match: Sendable, Equatable {
        case found(name: String, parameters: [String: String])
        case notFound
        case methodNotAllowed(allowed: [String])
    }

    public private(set) var routes: [Route] = []
    /// Routes without parameters, by method and exact pattern: a request for one of
    /// them (every webhook) is placed by one lookup instead of a walk over the table.
    /// A fully literal route that matches the path exactly is always the best match,
    /// so the shortcut answers what the walk would; anything else takes the walk.
    private var literalRoutes: [String: [String: String]] = [:]

    public init() {}

    /// Adds a route; a later identical (method, pattern) pair replaces nothing and is ignored.
    public mutating func add(_ method: String, _ pattern: String, name: String) {
        let method = method.uppercased()
        let segments = Router.split(pattern).map { part -> Segment in
            if part.hasPrefix("{"), part.hasSuffix("}"), part.count > 2 {
                return .parameter(String(part.dropFirst().dropLast()))
            }
            return .literal(String(part))
        }
        guard !routes.contains(where: { $0.method == method && $0.segments == segments }) else { return }
        routes.append(Route(method: method, pattern: pattern, name: name, segments: segments))
        if segments.allSatisfy({ if case .literal = $0 { true } else { false } }) {
            literalRoutes[method, default: [:]][pattern] = name
        }
    }

    /// The name of the parameterless route for exactly this method and path, if any.
    private func literalRoute(method: String, path: String) -> String? {
        literalRoutes[method]?[path]
    }

    /// Matches a method and a raw (percent-encoded) path. HEAD falls back to GET.
    public func match(method: String, path: String) -> Match {
        if let name = literalRoute(method: method, path: path) { return .found(name: name, parameters: [:]) }
        return walk(method: method, path: path)
    }

    /// `match` without the literal-route shortcut: every route considered.
    func walk(method: String, path: String) -> Match {
        let parts = Router.split(path)
        switch best(method: method.uppercased(), parts: parts) {
        case .found(let route): return .found(name: route.name, parameters: Router.parameters(route.segments, parts))
        case .notFound: return .notFound
        case .methodNotAllowed(let allowed): return .methodNotAllowed(allowed: allowed)
        }
    }

    private enum Best {
        case found(Route)
        case notFound
        case methodNotAllowed([String])
    }

    /// The winning route, found without allocating per candidate (this runs for every request,
    /// and again for its metrics label).
    private func best(method: String, parts: [Substring]) -> Best {
        var best: Route?
        var pathFits = false
        for route in routes where route.segments.count == parts.count {
            guard Router.fits(route.segments, parts) else { continue }
            pathFits = true
            let methodMatches = route.method == method || (method == "HEAD" && route.method == "GET")
            guard methodMatches else { continue }
            // A literal segment beats a parameter at the first position where two routes differ.
            if let current = best {
                switch Router.compareLiterals(route.segments, current.segments) {
                case .fewer: continue
                case .same where current.method == method: continue
                case .same, .more: break
                }
            }
            best = route
        }
        if let best { return .found(best) }
        guard pathFits else { return .notFound }
        var allowed: Set<String> = []
        for route in routes where route.segments.count == parts.count && Router.fits(route.segments, parts) {
            allowed.insert(route.method)
        }
        if allowed.contains("GET") { allowed.insert("HEAD") }
        return .methodNotAllowed(allowed.sorted())
    }

    /// Matches a request; unknown paths become a 404 problem and wrong methods a 405 problem with `Allow`.
    public func resolve(_ request: HTTPRequest) -> Result<(name: String, parameters: [String: String]), RoutingFailure> {
        switch match(method: request.method, path: request.path) {
        case .found(let name, let parameters):
            return .success((name, parameters))
        case .notFound:
            return .failure(RoutingFailure(response: .problem(
                status: 404, title: "Not Found", detail: "No route matches this path.")))
        case .methodNotAllowed(let allowed):
            return .failure(RoutingFailure(response: .problem(
                status: 405, title: "Method Not Allowed",
                detail: "This path accepts " + allowed.joined(separator: ", ") + ".",
                headers: [("Allow", allowed.joined(separator: ", "))])))
        }
    }

    /// The route name for metrics and logs: the matched name, or a fixed label for misses.
    public func label(method: String, path: String) -> String {
        if let name = literalRoute(method: method, path: path) { return name }
        switch best(method: method.uppercased(), parts: Router.split(path)) {
        case .found(let route): return route.name
        case .notFound: return "unmatched"
        case .methodNotAllowed: return "method_not_allowed"
        }
    }

    /// The segments after the leading "/", empty ones kept ("/a//b" is "a", "", "b").
    private static func split(_ path: String) -> [Substring] {
        let utf8 = path.utf8
        var start = utf8.startIndex
        if start < utf8.endIndex, utf8[start] == UInt8(ascii: "/") { start = utf8.index(after: start) }
        var parts: [Substring] = []
        parts.reserveCapacity(4)
        var index = start
        while index < utf8.endIndex {
            if utf8[index] == UInt8(ascii: "/") {
                parts.append(path[start..<index])
                start = utf8.index(after: index)
            }
            index = utf8.index(after: index)
        }
        parts.append(path[start..<utf8.endIndex])
        return parts
    }

    private static func fits(_ segments: [Segment], _ parts: [Substring]) -> Bool {
        for (segment, part) in zip(segments, parts) {
            switch segment {
            case .literal(let text): if !Router.sameBytes(part, text) { return false }
            case .parameter: if part.isEmpty { return false }
            }
        }
        return true
    }

    /// Byte equality of a path segment and a literal, on the UTF-8 in place (String's
    /// `==` compares by Unicode canonical equivalence, which routing needs not pay for).
    private static func sameBytes(_ part: Substring, _ literal: String) -> Bool {
        let (a, b) = (part.utf8, literal.utf8)
        guard a.count == b.count else { return false }
        let inPlace = a.withContiguousStorageIfAvailable { bytesA in
            b.withContiguousStorageIfAvailable { bytesB in
                for i in 0..<bytesA.count where bytesA[i] != bytesB[i] { return false }
                return true
            }
        }
        if let inPlace, let same = inPlace { return same }
        return a.elementsEqual(b)
    }

    private enum Precedence { case fewer, same, more }

    /// Whether `a` has a literal where `b` has a parameter at the first position they differ.
    private static func compareLiterals(_ a: [Segment], _ b: [Segment]) -> Precedence {
        for (x, y) in zip(a, b) {
            switch (x, y) {
            case (.literal, .parameter): return .more
            case (.parameter, .literal): return .fewer
            default: continue
            }
        }
        return .same
    }

    private static func parameters(_ segments: [Segment], _ parts: [Substring]) -> [String: String] {
        var parameters: [String: String] = [:]
        for (segment, part) in zip(segments, parts) {
            if case .parameter(let name) = segment { parameters[name] = PercentDecoding.decode(part) }
        }
        return parameters
    }
}

/// A request the router could not place, with the problem response to send.
public struct RoutingFailure: Error, Sendable {
    public let response: HTTPResponse
}
