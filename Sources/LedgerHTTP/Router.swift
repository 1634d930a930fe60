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
    }

    /// Matches a method and a raw (percent-encoded) path. HEAD falls back to GET.
    public func match(method: String, path: String) -> Match {
        let method = method.uppercased()
        let parts = Router.split(path)
        var best: (route: Route, parameters: [String: String], literals: [Bool])?
        var allowed: Set<String> = []
        for route in routes where route.segments.count == parts.count {
            guard let (parameters, literals) = Router.bind(route.segments, parts) else { continue }
            allowed.insert(route.method)
            let methodMatches = route.method == method || (method == "HEAD" && route.method == "GET")
            guard methodMatches else { continue }
            // A literal segment beats a parameter at the first position where two routes differ.
            if let current = best {
                if literals.lexicographicallyPrecedes(current.literals, by: { !$0 && $1 }) { continue }
                if literals == current.literals && current.route.method == method { continue }
            }
            best = (route, parameters, literals)
        }
        if let best { return .found(name: best.route.name, parameters: best.parameters) }
        if allowed.isEmpty { return .notFound }
        if allowed.contains("GET") { allowed.insert("HEAD") }
        return .methodNotAllowed(allowed: allowed.sorted())
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
        switch match(method: method, path: path) {
        case .found(let name, _): return name
        case .notFound: return "unmatched"
        case .methodNotAllowed: return "method_not_allowed"
        }
    }

    private static func split(_ path: String) -> [Substring] {
        var trimmed = path[...]
        if trimmed.first == "/" { trimmed = trimmed.dropFirst() }
        return trimmed.split(separator: "/", omittingEmptySubsequences: false)
    }

    private static func bind(_ segments: [Segment], _ parts: [Substring]) -> ([String: String], [Bool])? {
        var parameters: [String: String] = [:]
        var literals: [Bool] = []
        literals.reserveCapacity(parts.count)
        for (segment, part) in zip(segments, parts) {
            switch segment {
            case .literal(let text):
                guard part == text[...] else { return nil }
                literals.append(true)
            case .parameter(let name):
                guard !part.isEmpty else { return nil }
                parameters[name] = PercentDecoding.decode(part)
                literals.append(false)
            }
        }
        return (parameters, literals)
    }
}

/// A request the router could not place, with the problem response to send.
public struct RoutingFailure: Error, Sendable {
    public let response: HTTPResponse
}
