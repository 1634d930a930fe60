import LedgerObservability
/// The standard request metrics and access log, fed by `HTTPServer`'s observer.
///
/// Registers `<prefix>_requests_total{route,method,status}`,
/// `<prefix>_request_duration_seconds{route}` and `<prefix>_requests_in_flight`.
public struct HTTPInstrumentation: Sendable {
    public let requests: Counter
    public let duration: Histogram
    public let inFlight: Gauge
    private let metrics: MetricsRegistry

    public init(metrics: MetricsRegistry, prefix: String = "ledger_http",
                buckets: [Double] = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10]) {
        self.metrics = metrics
        requests = metrics.counter(prefix + "_requests_total", help: "HTTP requests answered, by route, method and status.",
                                   labels: ["route", "method", "status"])
        duration = metrics.histogram(prefix + "_request_duration_seconds",
                                     help: "Time from request headers to the end of the response, by route.",
                                     labels: ["route"], buckets: buckets)
        inFlight = metrics.gauge(prefix + "_requests_in_flight", help: "Requests being read, handled or answered.")
    }

    /// Samples `server.requestsInFlight` whenever the registry is rendered.
    public func sampleInFlight(of server: HTTPServer) {
        let gauge = inFlight
        metrics.addCollector { [weak server] in gauge.set(Double(server?.requestsInFlight ?? 0)) }
    }

    /// An observer that records the metrics and writes one access-log line per request:
    /// request id, method, route, path, status, duration. Never the query, headers or body.
    public func observer(logger: Logger, routeLabel: @escaping @Sendable (HTTPRequest) -> String)
        -> @Sendable (HTTPExchange) -> Void {
        let requests = self.requests
        let duration = self.duration
        return { exchange in
            let route = routeLabel(exchange.request)
            let status = String(exchange.status)
            requests.increment(HTTPInstrumentation.methodLabel(exchange.request.method), route, status: status)
            duration.observe(exchange.duration, route)
            var fields: [(String, LogValue)] = [
                ("request_id", .string(exchange.request.requestID)),
                ("method", .string(exchange.request.method)),
                ("route", .string(route)),
                ("path", .string(exchange.request.path)),
                ("status", .int(exchange.status)),
                ("duration_ms", .double((exchange.duration * 1_000_000).rounded() / 1_000)),
                ("remote", .string(exchange.request.remoteAddress)),
            ]
            if !exchange.completed { fields.append(("completed", .bool(false))) }
            logger.log(exchange.status >= 500 || exchange.status == 0 ? .warning : .info, "request", fields)
        }
    }

    /// Clients choose the method, so unknown ones share one label to keep cardinality fixed.
    static func methodLabel(_ method: String) -> String {
        switch method {
        case "GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS": method
        default: "other"
        }
    }

    /// The same, labelling routes with `router` ("unmatched" for unknown paths).
    public func observer(logger: Logger, router: Router) -> @Sendable (HTTPExchange) -> Void {
        observer(logger: logger) { router.label(method: $0.method, path: $0.path) }
    }
}

private extension Counter {
    func increment(_ method: String, _ route: String, status: String) {
        increment(by: 1, route, method, status)
    }
}
