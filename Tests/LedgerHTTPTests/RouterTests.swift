import Testing
@testable import LedgerHTTP

@Suite("Router")
struct RouterTests {
    static let router: Router = {
        var router = Router()
        router.add("POST", "/v1/orders", name: "orders.register")
        router.add("GET", "/v1/orders", name: "orders.list")
        router.add("GET", "/v1/orders/{no}", name: "orders.get")
        router.add("GET", "/v1/orders/{no}/events", name: "orders.events")
        router.add("POST", "/v1/orders/{no}/client-events", name: "orders.clientEvents")
        router.add("GET", "/v1/ledger/head", name: "ledger.head")
        router.add("GET", "/v1/orders/search", name: "orders.search")
        router.add("GET", "/healthz", name: "healthz")
        return router
    }()

    @Test("a pattern binds its parameters, percent-decoded")
    func parameters() {
        #expect(Self.router.match(method: "GET", path: "/v1/orders/ORD-1%3A2/events")
                == .found(name: "orders.events", parameters: ["no": "ORD-1:2"]))
        #expect(Self.router.match(method: "POST", path: "/v1/orders/a%2Fb/client-events")
                == .found(name: "orders.clientEvents", parameters: ["no": "a/b"]))
    }

    @Test("the same path picks the route by method")
    func methods() {
        #expect(Self.router.match(method: "GET", path: "/v1/orders") == .found(name: "orders.list", parameters: [:]))
        #expect(Self.router.match(method: "POST", path: "/v1/orders") == .found(name: "orders.register", parameters: [:]))
    }

    @Test("a literal segment beats a parameter")
    func literalWins() {
        #expect(Self.router.match(method: "GET", path: "/v1/orders/search") == .found(name: "orders.search", parameters: [:]))
        #expect(Self.router.match(method: "GET", path: "/v1/orders/searching") == .found(name: "orders.get", parameters: ["no": "searching"]))
    }

    @Test("unknown paths, empty segments and trailing slashes are not found")
    func notFound() {
        #expect(Self.router.match(method: "GET", path: "/v2/orders") == .notFound)
        #expect(Self.router.match(method: "GET", path: "/v1/orders//events") == .notFound)
        #expect(Self.router.match(method: "GET", path: "/v1/orders/") == .notFound)
        #expect(Self.router.match(method: "GET", path: "") == .notFound)
    }

    @Test("a known path with the wrong method is 405 with the allowed methods")
    func methodNotAllowed() throws {
        #expect(Self.router.match(method: "DELETE", path: "/v1/orders") == .methodNotAllowed(allowed: ["GET", "HEAD", "POST"]))
        let request = HTTPRequest(method: "PUT", path: "/v1/ledger/head")
        guard case .failure(let failure) = Self.router.resolve(request) else {
            Issue.record("expected a failure")
            return
        }
        #expect(failure.response.status == 405)
        #expect(failure.response.header("Allow") == "GET, HEAD")
        #expect(failure.response.header("Content-Type") == "application/problem+json")
    }

    @Test("resolve gives a 404 problem for unknown paths")
    func resolveNotFound() {
        guard case .failure(let failure) = Self.router.resolve(HTTPRequest(method: "GET", path: "/nope")) else {
            Issue.record("expected a failure")
            return
        }
        #expect(failure.response.status == 404)
        #expect(String(decoding: failure.response.bodyBytes ?? [], as: UTF8.self).contains("\"status\":404"))
    }

    @Test("HEAD is served by the GET route, and labels stay low-cardinality")
    func headAndLabels() {
        #expect(Self.router.match(method: "HEAD", path: "/healthz") == .found(name: "healthz", parameters: [:]))
        #expect(Self.router.label(method: "GET", path: "/v1/orders/X1") == "orders.get")
        #expect(Self.router.label(method: "GET", path: "/wp-admin") == "unmatched")
        #expect(Self.router.label(method: "DELETE", path: "/healthz") == "method_not_allowed")
    }

    @Test("the literal-route shortcut answers what walking every route answers, for 20,000 generated requests")
    func shortcutMatchesTheWalk() {
        let segments = ["v1", "orders", "search", "events", "client-events", "ledger", "head", "healthz", "", "ORD-1", "x%2Fy"]
        let methods = ["GET", "POST", "HEAD", "get", "PUT", "DELETE"]
        var state: UInt64 = 0x5EED_2007
        func next(_ n: Int) -> Int {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return Int((state >> 33) % UInt64(n))
        }
        for _ in 0..<20_000 {
            let path = (next(4) == 0 ? "" : "/") + (0..<next(5)).map { _ in segments[next(segments.count)] }.joined(separator: "/")
                + (next(6) == 0 ? "/" : "")
            let method = methods[next(methods.count)]
            let matched = Self.router.match(method: method, path: path)
            let walked = Self.router.walk(method: method, path: path)
            if matched != walked {
                Issue.record("\(method) \(path): \(matched) against \(walked)")
                return
            }
            #expect(Self.router.label(method: method, path: path) == {
                switch walked {
                case .found(let name, _): name
                case .notFound: "unmatched"
                case .methodNotAllowed: "method_not_allowed"
                }
            }())
        }
    }
}
