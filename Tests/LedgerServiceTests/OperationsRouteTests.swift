import Foundation
import LedgerCore
import LedgerPostgres
@testable import LedgerService
import LedgerTestSupport
import Testing

/// http-api.md, the ledger head, health, metrics, the OpenAPI document and the answers for unknown routes.
@Suite("The ledger head and the operations routes")
final class OperationsRouteTests {
    let ledger: LedgerFixture
    init() throws { ledger = try .start("routes") }
    deinit { ledger.stop() }

    @Test("the ledger head is the newest event's position and chain hash")
    func ledgerHead() throws {
        let empty = try ledger.client.get("/v1/ledger/head", token: ledger.auditor)
        #expect(empty.status == 200, "\(empty)")
        #expect(empty["position"]?.int64Value == 0, "an empty ledger's head is position 0: \(empty)")
        #expect(empty["hash"]?.stringValue == String(repeating: "0", count: 64))
        _ = try ledger.register("H-1")
        _ = try ledger.register("H-2")
        let head = try ledger.client.get("/v1/ledger/head", token: ledger.auditor)
        #expect(head.status == 200, "\(head)")
        let newest = try ledger.query("SELECT position, encode(hash, 'hex') AS hash FROM ledger.events ORDER BY position DESC LIMIT 1")
        #expect(head["position"]?.int64Value == (try newest.int64(0, "position")))
        #expect(head["hash"]?.stringValue == (try newest.string(0, "hash")))
        #expect(head["hash"]?.stringValue?.count == 64)
    }

    @Test("healthz and readyz answer 200 without a token while the database is up")
    func healthAndReadiness() throws {
        let health = try ledger.client.get("/healthz")
        #expect(health.status == 200, "\(health)")
        let ready = try ledger.client.get("/readyz")
        #expect(ready.status == 200, "\(ready)")
    }

    @Test("metrics are Prometheus text counting requests by route and status, appended events, rejected deliveries and pool use")
    func metrics() throws {
        #expect(try ledger.register("M-1").status == 201)
        let forged = try ledger.sendWeb3(LedgerFixture.web3Body("M-1", status: 3), key: "not-the-key")
        #expect(forged.status == 401)
        let reply = try ledger.client.get("/metrics")
        #expect(reply.status == 200)
        #expect(reply.header("Content-Type")?.hasPrefix("text/plain") == true, "\(reply.header("Content-Type") ?? "-")")
        let text = reply.text
        for family in ["ledger_http_requests_total", "ledger_events_appended_total", "ledger_rejected_deliveries_total",
                       "ledger_db_pool_connections", "ledger_db_read_pool_connections", "ledger_quarantine_full_total"] {
            #expect(text.contains("# TYPE \(family) "), "no \(family) family")
        }
        let lines = text.split(separator: "\n")
        #expect(lines.contains { $0.hasPrefix("ledger_http_requests_total{") && $0.contains(#"route="register_order""#) && $0.contains(#"status="201""#) },
                "requests are counted by route and status")
        #expect(lines.contains { $0.hasPrefix("ledger_events_appended_total") && $0.hasSuffix(" 1") }, "one event appended")
        #expect(lines.contains { $0 == #"ledger_rejected_deliveries_total{reason="bad_signature"} 1"# })
        #expect(lines.contains { $0.hasPrefix("ledger_db_pool_connections{") })
        #expect(lines.contains { $0.hasPrefix(#"ledger_db_read_pool_connections{state="max"}"#) })
        #expect(lines.contains { $0.hasPrefix("ledger_http_request_duration_seconds_bucket{") && $0.contains(#"route="register_order""#) },
                "a latency histogram by route")
        var seeded = try ledger.metric("ledger_group_commit_hints_seeded")
        for _ in 0..<50 where seeded != 1 {
            Thread.sleep(forTimeInterval: 0.1)
            seeded = try ledger.metric("ledger_group_commit_hints_seeded")
        }
        #expect(seeded == 1, "the writer's probe hints were read from the store at startup")
    }

    @Test("GET /openapi.json serves API/openapi.json byte for byte, as JSON (OpenAPIDocumentTests checks what it says)")
    func openAPI() throws {
        let reply = try ledger.client.get("/openapi.json")
        #expect(reply.status == 200)
        #expect(reply.header("Content-Type")?.hasPrefix("application/json") == true, "\(reply)")
        let file = try #require(FileManager.default.contents(atPath: LedgerFixture.openAPIPath))
        #expect(reply.body == [UInt8](file))
    }

    @Test("an unknown path is 404 and a wrong method 405, both as problems")
    func routingFailures() throws {
        let missing = try ledger.client.get("/v1/nothing-here", token: ledger.auditor)
        #expect(missing.status == 404 && missing.isProblem, "\(missing)")
        let wrongMethod = try ledger.client.send("DELETE", "/v1/orders", headers: [("Authorization", "Bearer " + ledger.auditor)])
        #expect(wrongMethod.status == 405 && wrongMethod.isProblem, "\(wrongMethod)")
        #expect(wrongMethod.header("Allow") != nil)
    }
}
