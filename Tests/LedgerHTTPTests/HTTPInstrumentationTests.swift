@testable import LedgerHTTP
import LedgerObservability
import Synchronization
import Testing

@Suite("Request instrumentation")
struct HTTPInstrumentationTests {
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
