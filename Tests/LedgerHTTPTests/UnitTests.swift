import Glibc
@testable import LedgerHTTP
import LedgerObservability
import Synchronization
import Testing
#if canImport(Glibc)
#endif

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

@Suite("Framing guard")
struct FramingGuardTests {
    func check(_ headers: [(String, String)], version: String = "HTTP/1.1", max: Int = 100) -> FramingGuard.Verdict {
        FramingGuard.check(headers: headers, version: version, maxBodyBytes: max)
    }

    @Test("plain framing is accepted")
    func accepted() {
        #expect(check([]) == .accept(contentLength: nil, chunked: false))
        #expect(check([("Content-Length", "10")]) == .accept(contentLength: 10, chunked: false))
        #expect(check([("transfer-encoding", "Chunked")]) == .accept(contentLength: nil, chunked: true))
    }

    @Test("ambiguous framing is a 400", arguments: [
        [("Transfer-Encoding", "chunked"), ("Content-Length", "3")],
        [("Content-Length", "3"), ("Content-Length", "4")],
        [("Content-Length", "3"), ("content-length", "3")],
        [("Transfer-Encoding", "gzip")],
        [("Transfer-Encoding", "gzip, chunked")],
        [("Transfer-Encoding", "chunked"), ("Transfer-Encoding", "chunked")],
        [("Transfer-Encoding ", "chunked")],
        [("Content-Length", "1e3")],
        [("Content-Length", "")],
        [("Content-Length", "99999999999999999999999")],
    ])
    func rejected(headers: [(String, String)]) {
        guard case .reject(let status, _, _) = check(headers) else {
            Issue.record("accepted \(headers)")
            return
        }
        #expect(status == 400)
    }

    @Test("chunked on HTTP/1.0 is a 400, and a declared length over the limit is a 413")
    func versionAndSize() {
        if case .reject(let status, _, _) = check([("Transfer-Encoding", "chunked")], version: "HTTP/1.0") {
            #expect(status == 400)
        } else { Issue.record("accepted chunked HTTP/1.0") }
        if case .reject(let status, _, _) = check([("Content-Length", "101")]) {
            #expect(status == 413)
        } else { Issue.record("accepted an oversized length") }
        #expect(check([("Content-Length", "100")]) == .accept(contentLength: 100, chunked: false))
    }
}

@Suite("Responses, requests and configuration")
struct ValueTests {
    @Test("problem+json escapes what it is given")
    func problemEscaping() {
        let response = HTTPResponse.problem(status: 400, title: "Bad \"input\"", detail: "line\nbreak \\ tab\t\u{1} ok")
        let text = String(decoding: response.bodyBytes ?? [], as: UTF8.self)
        #expect(text == #"{"type":"about:blank","title":"Bad \"input\"","status":400,"detail":"line\nbreak \\ tab\t\u0001 ok"}"#)
        #expect(response.header("content-type") == "application/problem+json")
    }

    @Test("json() sets the content type and keeps the bytes")
    func json() {
        let response = HTTPResponse.json(201, Array("{}".utf8), headers: [("Location", "/x")])
        #expect(response.status == 201)
        #expect(response.header("Content-Type") == "application/json")
        #expect(response.header("Location") == "/x")
        #expect(response.bodyBytes == Array("{}".utf8))
    }

    @Test("request ids are accepted only as short safe tokens")
    func requestIDs() {
        #expect(RequestID.sanitized("abc-DEF_1.2") == "abc-DEF_1.2")
        #expect(RequestID.sanitized(String(repeating: "a", count: 64)) != nil)
        #expect(RequestID.sanitized(String(repeating: "a", count: 65)) == nil)
        #expect(RequestID.sanitized("a b") == nil)
        #expect(RequestID.sanitized("") == nil)
        #expect(RequestID.sanitized("é") == nil)
        #expect(RequestID.generate().count == 32)
        #expect(RequestID.generate() != RequestID.generate())
    }

    @Test("percent-decoding tolerates malformed escapes")
    func percentDecoding() {
        #expect(PercentDecoding.decode("a%20b%2F") == "a b/")
        #expect(PercentDecoding.decode("100%") == "100%")
        #expect(PercentDecoding.decode("%zz%4") == "%zz%4")
        #expect(PercentDecoding.decode("%FF") == "\u{FFFD}")
    }

    @Test("headers are case-insensitive and repeated ones are joined")
    func requestHeaders() {
        let request = HTTPRequest(method: "GET", path: "/", queryItems: [("a", "1"), ("a", "2")],
                                  headers: ["X-One": "1", "Authorization": "Bearer t"])
        #expect(request.header("x-one") == "1")
        #expect(request.headers["authorization"] == "Bearer t")
        #expect(request.query["a"] == "1")
    }

    @Test("listen addresses parse host and port", arguments: [
        ("127.0.0.1:8080", "127.0.0.1", 8080),
        ("[::1]:0", "::1", 0),
        (":9000", "0.0.0.0", 9000),
        ("localhost:1", "localhost", 1),
    ])
    func listenAddresses(text: String, host: String, port: Int) throws {
        let parsed = try HTTPServerConfiguration.parseListenAddress(text)
        #expect(parsed.host == host)
        #expect(parsed.port == port)
    }

    @Test("bad listen addresses and numbers are configuration errors")
    func badConfiguration() {
        for text in ["8080", "host:", "host:70000", "::1:80", "[::1]80"] {
            #expect(throws: HTTPServerError.self, "\(text)") { try HTTPServerConfiguration.parseListenAddress(text) }
        }
        #expect(throws: HTTPServerError.self) {
            try HTTPServerConfiguration.fromEnvironment(["LEDGER_MAX_BODY": "lots"])
        }
    }

    @Test("the environment overrides the defaults")
    func environment() throws {
        let configuration = try HTTPServerConfiguration.fromEnvironment([
            "LEDGER_LISTEN": "0.0.0.0:9090", "LEDGER_MAX_BODY": "2048", "LEDGER_HTTP_WORKERS": "4",
        ])
        #expect(configuration.host == "0.0.0.0")
        #expect(configuration.port == 9090)
        #expect(configuration.maxBodyBytes == 2048)
        #expect(configuration.workerThreads == 4)
        #expect(try HTTPServerConfiguration.fromEnvironment([:]) == HTTPServerConfiguration())
        // An empty variable keeps the default, as LedgerConfiguration reads it for every command.
        #expect(try HTTPServerConfiguration.fromEnvironment(["LEDGER_MAX_BODY": "", "LEDGER_HTTP_WORKERS": "", "LEDGER_LISTEN": ""])
                == HTTPServerConfiguration())
        #expect(throws: HTTPServerError.self) {
            try HTTPServerConfiguration.fromEnvironment(["LEDGER_MAX_BODY": String(64 << 20 + 1)])
        }
    }
}

@Suite("Metrics and logs")
struct ObservabilityTests {
    @Test("counters, gauges and histograms render in Prometheus text format")
    func rendering() {
        let registry = MetricsRegistry()
        let requests = registry.counter("ledger_http_requests_total", help: "Requests.", labels: ["route", "status"])
        requests.increment("orders.get", "200")
        requests.increment(by: 2, "orders.get", "200")
        requests.increment("orders.get", "404")
        let pool = registry.gauge("ledger_db_pool_in_use", help: "Connections in use.")
        pool.set(3)
        let latency = registry.histogram("ledger_http_request_duration_seconds", help: "Latency.",
                                         labels: ["route"], buckets: [0.01, 0.1, 1])
        latency.observe(0.005, "r")
        latency.observe(0.05, "r")
        latency.observe(5, "r")
        let expected = """
        # HELP ledger_http_requests_total Requests.
        # TYPE ledger_http_requests_total counter
        ledger_http_requests_total{route="orders.get",status="200"} 3
        ledger_http_requests_total{route="orders.get",status="404"} 1
        # HELP ledger_db_pool_in_use Connections in use.
        # TYPE ledger_db_pool_in_use gauge
        ledger_db_pool_in_use 3
        # HELP ledger_http_request_duration_seconds Latency.
        # TYPE ledger_http_request_duration_seconds histogram
        ledger_http_request_duration_seconds_bucket{route="r",le="0.01"} 1
        ledger_http_request_duration_seconds_bucket{route="r",le="0.1"} 2
        ledger_http_request_duration_seconds_bucket{route="r",le="1"} 2
        ledger_http_request_duration_seconds_bucket{route="r",le="+Inf"} 3
        ledger_http_request_duration_seconds_sum{route="r"} 5.055
        ledger_http_request_duration_seconds_count{route="r"} 3

        """
        #expect(registry.render() == expected)
    }

    @Test("label values are escaped and registering twice returns the same metric")
    func escapingAndIdempotence() {
        let registry = MetricsRegistry()
        let first = registry.counter("c_total", help: "Multi\nline \\ help.", labels: ["reason"])
        first.increment("bad \"sig\"\n\\")
        let second = registry.counter("c_total", help: "ignored", labels: ["reason"])
        second.increment("bad \"sig\"\n\\")
        #expect(first.value("bad \"sig\"\n\\") == 2)
        #expect(registry.render() == """
        # HELP c_total Multi\\nline \\\\ help.
        # TYPE c_total counter
        c_total{reason="bad \\"sig\\"\\n\\\\"} 2

        """)
    }

    @Test("collectors refresh sampled gauges at render time")
    func collectors() {
        let registry = MetricsRegistry()
        let gauge = registry.gauge("g", help: "G.")
        registry.addCollector { gauge.set(7) }
        #expect(registry.render().contains("\ng 7\n"))
    }

    @Test("a log line is one JSON object with time, level, message and fields")
    func logLine() {
        let line = Logger.line(level: .info, message: "request \"done\"",
                               fields: [("status", 200), ("route", "orders.get"), ("message", "dropped"), ("ok", true)],
                               time: "2026-01-01T00:00:00.000Z")
        #expect(line == #"{"time":"2026-01-01T00:00:00.000Z","level":"info","message":"request \"done\"","status":200,"route":"orders.get","ok":true}"#)
        #expect(!line.contains("\n"))
        let now = Logger.now()
        #expect(now.count == 24 && now.hasSuffix("Z"))
    }

    @Test("a logger on a buffered writer writes the same lines as bytes, routine ones batched and warnings at once, in order")
    func bufferedLogLines() throws {
        var fds: [Int32] = [0, 0]
        #expect(pipe(&fds) == 0)
        let writer = BufferedLineWriter(fd: fds[1], flushInterval: 5)
        let logger = Logger(minimumLevel: .info, baseFields: [("component", "http")], writer: writer)
        logger.debug("hidden")
        logger.info("request", [("status", 201), ("route", "orders.get"), ("path", "/v1/orders/A\"1"),
                                ("duration_ms", 1.5), ("ok", true), ("negative", -42)])
        logger.warning("slow", [("status", 503)])   // written at once, after the line before it
        // Read until both lines are there (the writer's thread may have flushed the first alone).
        var received = [UInt8]()
        var chunk = [UInt8](repeating: 0, count: 4096)
        var waiting = pollfd(fd: fds[0], events: Int16(POLLIN), revents: 0)
        while received.filter({ $0 == UInt8(ascii: "\n") }).count < 2, poll(&waiting, 1, 2_000) > 0 {
            let count = read(fds[0], &chunk, chunk.count)
            if count <= 0 { break }
            received += chunk[..<count]
        }
        writer.close()
        close(fds[0]); close(fds[1])
        let lines = String(decoding: received, as: UTF8.self).split(separator: "\n").map(String.init)
        #expect(lines.count == 2, "\(lines)")
        let time = String(try #require(lines.first).dropFirst(9).prefix(24))
        #expect(time.count == 24 && time.hasSuffix("Z"))
        #expect(lines.first == Logger.line(level: .info, message: "request",
                                           fields: [("component", "http"), ("status", 201), ("route", "orders.get"),
                                                    ("path", "/v1/orders/A\"1"), ("duration_ms", 1.5), ("ok", true),
                                                    ("negative", -42)], time: time))
        #expect(lines.first?.contains(#""path":"/v1/orders/A\"1","duration_ms":1.5,"ok":true,"negative":-42}"#) == true)
        #expect(lines.last?.contains(#""level":"warning","message":"slow","component":"http","status":503}"#) == true)
    }

    @Test("the instrumentation observer records metrics and logs without the query")
    func instrumentation() {
        let registry = MetricsRegistry()
        let instrumentation = HTTPInstrumentation(metrics: registry)
        let lines = LineCollector()
        let logger = Logger(sink: { lines.append($0) })
        var router = Router()
        router.add("GET", "/v1/orders/{no}", name: "orders.get")
        let observe = instrumentation.observer(logger: logger, router: router)
        observe(HTTPExchange(request: HTTPRequest(method: "GET", path: "/v1/orders/A1", queryItems: [("q", "secret")]),
                             status: 200, duration: 0.0123, completed: true))
        observe(HTTPExchange(request: HTTPRequest(method: "BREW", path: "/x"), status: 404, duration: 0.001, completed: true))
        #expect(instrumentation.requests.value("orders.get", "GET", "200") == 1)
        #expect(instrumentation.requests.value("unmatched", "other", "404") == 1)
        #expect(instrumentation.duration.count("orders.get") == 1)
        let logged = lines.all
        #expect(logged.count == 2)
        #expect(logged[0].contains(#""route":"orders.get""#))
        #expect(logged[0].contains(#""status":200"#))
        #expect(logged[0].contains(#""duration_ms":12.3"#))
        #expect(!logged[0].contains("secret"))
    }
}


final class LineCollector: Sendable {
    private let lines = Mutex<[String]>([])
    func append(_ line: String) { lines.withLock { $0.append(line) } }
    var all: [String] { lines.withLock { $0 } }
}

@Suite("Header names")
struct HeaderNameTests {
    @Test("names are lowercased byte by byte when ASCII, as they are when already lowercase, by Unicode otherwise")
    func fieldNames() {
        #expect(HTTPRequest.fieldName("X-Pay-Signature") == "x-pay-signature")
        #expect(HTTPRequest.fieldName("content-type") == "content-type")
        #expect(HTTPRequest.fieldName("AUTHORIZATION-With-A-Long-Name-Beyond-Fifteen") == "authorization-with-a-long-name-beyond-fifteen")
        #expect(HTTPRequest.fieldName("X-Ünicode") == "x-ünicode")
        #expect(HTTPRequest.fieldName("") == "")
    }

    @Test("lookups ignore case, and repeated fields are joined")
    func lookups() {
        let request = HTTPRequest(method: "POST", path: "/", headers: ["X-Pay-Timestamp": "1", "Accept": "a"])
        #expect(request.header("x-pay-timestamp") == "1")
        #expect(request.header("X-PAY-TIMESTAMP") == "1")
        #expect(request.headers["accept"] == "a")
        let response = HTTPResponse(status: 200, headers: [("Retry-After", "2")])
        #expect(response.header("RETRY-AFTER") == "2")
    }
}
