import Foundation
import LedgerCore
@testable import LedgerAPI
import LedgerHTTP
import LedgerObservability
@testable import LedgerService
import Testing

/// issue 4, Logs and metrics: one JSON object a line with the request's
/// facts, never a secret or a raw body; metrics whose label sets a caller
/// cannot grow.
@Suite("Logs and metrics under hostile input")
struct LogAndMetricsTests {
    @Test("every log line is one JSON object; request lines carry time, level, request id, method, route, status and duration, and no secret or body")
    func structuredLogsWithoutSecrets() throws {
        let lines = Locked([String]())
        let logger = Logger(minimumLevel: .debug, sink: { line in lines.with { $0.append(line) } })
        let ledger = try LedgerFixture.start("logs", logger: logger)
        defer { ledger.stop() }

        let marker = "body-marker-\(UInt32.random(in: 0...UInt32.max))"
        let registered = try ledger.register("LOG-1", extra: #","externalCustomerId":"\#(marker)@example.com""#)
        #expect(registered.status == 201)
        let requestId = try #require(registered.header("X-Request-Id"))
        let body = LedgerFixture.web3Body("LOG-1", status: 3, extra: #","note":"\#(marker)""#)
        let timestamp = String(Timestamp.now().seconds)
        let good = LedgerFixture.web3Headers(body, timestamp: timestamp)
        let forged = LedgerFixture.web3Headers(body, timestamp: timestamp, key: "forger")
        #expect(try ledger.client.post("/v1/webhooks/web3", body: body, headers: forged).status == 401)
        #expect(try ledger.client.post("/v1/webhooks/web3", body: body, headers: good).status == 200)
        let banxaAuth = "Bearer \(LedgerFixture.banxaAPIKey):\(String(repeating: "ab", count: 32)):\(Timestamp.now().microseconds / 1000)"
        #expect(try ledger.client.post("/v1/webhooks/banxa", body: body, headers: [("Authorization", banxaAuth)]).status == 401)
        #expect(try ledger.order("LOG-1").status == 200)
        let hostileId = #"abc","level":"fatal","injected":"yes"#
        #expect(try ledger.client.get("/healthz", headers: [("X-Request-Id", hostileId)]).status == 200)
        #expect(try ledger.client.get("/v1/orders/LOG-1/events", token: ledger.auditor).status == 200)
        #expect(try ledger.client.get("/v1/orders", token: "lgr_" + String(repeating: "f", count: 64)).status == 401)

        // The access log is written after the response: give the last line a moment.
        _ = eventually(within: 3) { lines.with { $0.filter { $0.contains(#""message":"request""#) }.count } >= 8 }
        let all = lines.snapshot
        #expect(all.count >= 7, "\(all.count) log lines")
        let secrets = [ledger.ingest, ledger.support, ledger.auditor, good[1].1, forged[1].1, String(repeating: "ab", count: 32),
                       "key-old", "key-new", LedgerFixture.banxaSecret, marker]
        for line in all {
            let object = try? JSONValue.parse(line)
            #expect(object?.objectFields != nil, "not one JSON object: \(line)")
            #expect(object?["time"]?.stringValue?.hasSuffix("Z") == true, "\(line)")
            #expect(object?["level"]?.stringValue != nil, "\(line)")
            for secret in secrets { #expect(!line.contains(secret), "a log line leaks \(secret.prefix(12))…: \(line)") }
            #expect(object?["injected"] == nil, "a request id forged a log field: \(line)")
        }
        let requests = all.compactMap { try? JSONValue.parse($0) }.filter { $0["message"]?.stringValue == "request" }
        for request in requests {
            for field in ["request_id", "method", "route", "status", "duration_ms"] {
                #expect(request[field] != nil, "request line without \(field): \(request)")
            }
        }
        #expect(requests.contains { $0["request_id"]?.stringValue == requestId && $0["route"]?.stringValue == "register_order"
                                     && $0["status"]?.int64Value == 201 },
                "the registration's line, found by the X-Request-Id the client saw")
    }

    @Test("scraping /metrics runs a fixed set of collectors: a scrape adds none, and the in-flight gauge is there")
    func scrapesAddNothing() throws {
        let ledger = try LedgerFixture.start("scrapes")
        defer { ledger.stop() }
        let before = ledger.app.metricsRegistry.collectorCount
        for _ in 0..<5 {
            let reply = try ledger.client.get("/metrics")
            #expect(reply.status == 200 && reply.text.contains("ledger_http_requests_in_flight"), "\(reply.text.prefix(200))")
        }
        #expect(ledger.app.metricsRegistry.collectorCount == before)
    }

    @Test("unknown paths and odd methods share fixed metric labels, so callers cannot grow the label sets")
    func boundedLabels() throws {
        let ledger = try LedgerFixture.start("labels")
        defer { ledger.stop() }
        var paths: [String] = []
        for _ in 0..<20 {
            let path = "/probe-\(UInt32.random(in: 0...UInt32.max))"
            paths.append(path)
            #expect(try ledger.client.get(path).status == 404)
        }
        #expect(try ledger.client.send("BREW", "/v1/orders").status >= 400)
        for no in ["LB-1", "LB-2", "LB-3"] { #expect(try ledger.order(no).status == 404) }
        let text = try ledger.client.get("/metrics").text
        for path in paths { #expect(!text.contains(path.dropFirst()), "a probed path became a label: \(path)") }
        #expect(!text.contains("BREW"))
        #expect(!text.contains("LB-1"), "order numbers are not labels")
        #expect(text.contains(#"route="get_order""#))
    }
}
