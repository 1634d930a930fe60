import Foundation
import LedgerCore
import LedgerPostgres
@testable import LedgerService
import LedgerTestSupport
import Testing

/// http-api.md, corrections: what an auditor may change, how a retried correction is recognised, and what a paid order keeps.
@Suite("POST /v1/orders/{no}/corrections: an auditor's corrections")
final class CorrectionRouteTests {
    let ledger: LedgerFixture
    init() throws { ledger = try .start("routes") }
    deinit { ledger.stop() }

    @Test("an auditor's correction answers 201, moves an unpaid order's status, and names the auditor as actor")
    func corrections() throws {
        _ = try ledger.register("K-1")
        let reply = try ledger.client.post("/v1/orders/K-1/corrections", token: ledger.auditor,
                                           json: #"{"status":5,"reason":"customer cancelled by phone"}"#)
        #expect(reply.status == 201, "\(reply)")
        #expect(reply["order"]?["status"]?.int64Value == 5)
        let stored = try ledger.query("""
            SELECT source, payload->>'actor' AS actor, payload->>'reason' AS reason FROM ledger.events
             WHERE stream = 'order-K-1' ORDER BY position DESC LIMIT 1
            """)
        #expect(try stored.string(0, "source") == "operator")
        #expect(try stored.value(0, "actor") == "auditor-ann")
        #expect(try stored.value(0, "reason") == "customer cancelled by phone")
    }

    /// http-api.md: a replayed write (same content) answers 200 duplicate and appends
    /// nothing. A correction sent without an id is the same correction again while it is
    /// still the order's newest event (a retry after a 503 whose commit went through).

    @Test("a correction replayed without a key is 200 duplicate while it is the order's newest event; after another event it is new")
    func correctionReplay() throws {
        _ = try ledger.register("K-3")
        let body = #"{"status":6,"reason":"held for review"}"#
        func correct(_ headers: [(String, String)] = []) throws -> Reply {
            try ledger.client.post("/v1/orders/K-3/corrections", token: ledger.auditor, json: body, headers: headers)
        }
        func events() throws -> Int64 { try ledger.count("SELECT count(*) AS n FROM ledger.events WHERE stream = 'order-K-3'") }
        let first = try correct()
        #expect(first.status == 201, "\(first)")
        let replay = try correct()
        #expect(replay.status == 200 && replay["duplicate"]?.boolValue == true, "\(replay)")
        #expect(replay["eventId"]?.stringValue == first["eventId"]?.stringValue)
        #expect(try events() == 2, "the registration and one correction")

        #expect(try ledger.sendWeb3(LedgerFixture.web3Body("K-3", status: 2)).status == 200)
        let afterWebhook = try correct()
        #expect(afterWebhook.status == 201 && afterWebhook["duplicate"]?.boolValue == false, "a new decision: \(afterWebhook)")
        #expect(try events() == 4)
        let explicit = try correct([("Idempotency-Key", "K-3-again")])
        #expect(explicit.status == 201, "an Idempotency-Key decides alone: \(explicit)")
        #expect(try events() == 5)

        // Copies racing see the same newest event: one is stored.
        #expect(try ledger.sendWeb3(LedgerFixture.web3Body("K-3", status: 1)).status == 200)
        let port = ledger.port
        let token = ledger.auditor
        let statuses = Locked([Int]())
        onThreads(8) { _ in
            let reply = try? HTTPClient(port: port).post("/v1/orders/K-3/corrections", token: token, json: body)
            statuses.with { $0.append(reply?.status ?? 0) }
        }
        #expect(statuses.snapshot.sorted() == [200, 200, 200, 200, 200, 200, 200, 201], "\(statuses.snapshot)")
        #expect(try events() == 7)
    }

    @Test("a correction outranked by a report with a later observedAt is a new event when sent again, not a replay")
    func correctionResentWhileOutranked() throws {
        _ = try ledger.register("K-4")
        let later = Timestamp(seconds: Timestamp.now().seconds + 120).rfc3339
        let report = try ledger.client.post("/v1/orders/K-4/observations", token: ledger.ingest,
                                            json: #"{"provider":"acmepay","response":{"status":2},"observedAt":"\#(later)"}"#)
        #expect(report.status == 201, "\(report)")
        let body = #"{"status":5,"reason":"customer cancelled"}"#
        let first = try ledger.client.post("/v1/orders/K-4/corrections", token: ledger.auditor, json: body)
        #expect(first.status == 201, "\(first)")
        #expect(try ledger.order("K-4")["status"]?.int64Value == 2, "the report's later observedAt outranks the correction")
        let again = try ledger.client.post("/v1/orders/K-4/corrections", token: ledger.auditor, json: body)
        #expect(again.status == 201 && again["duplicate"]?.boolValue == false, "sending it again is no replay: \(again)")
        #expect(again["eventId"]?.stringValue != first["eventId"]?.stringValue)
    }

    @Test("a correction cannot move a paid order out of paid: it is recorded as a conflict needing attention")
    func correctionOfPaidOrder() throws {
        _ = try ledger.register("K-3")
        #expect(try ledger.sendWeb3(LedgerFixture.web3Body("K-3", status: 3), timestamp: Timestamp.now().seconds - 5).status == 200)
        let reply = try ledger.client.post("/v1/orders/K-3/corrections", token: ledger.auditor,
                                           json: #"{"status":5,"reason":"customer says it expired"}"#)
        #expect(reply.status == 201, "\(reply)")
        let order = try ledger.order("K-3", token: ledger.auditor)
        #expect(order["status"]?.int64Value == 3, "paid is sticky: \(order)")
        #expect(order["paid"]?.boolValue == true)
        #expect(order["attention"]?.boolValue == true)
        #expect(order["conflicts"]?.arrayValue?.contains { $0["kind"]?.stringValue == "status_conflict" } == true, "\(order)")
    }

    @Test("a paid webhook whose amount differs from the registered one marks the order for attention with an amount mismatch")
    func amountMismatch() throws {
        _ = try ledger.register("K-4", amount: "40.00")
        #expect(try ledger.sendWeb3(LedgerFixture.web3Body("K-4", status: 3, amount: "39.99")).status == 200)
        let order = try ledger.order("K-4")
        #expect(order["status"]?.int64Value == 3)
        #expect(order["attention"]?.boolValue == true, "\(order)")
        #expect(order["conflicts"]?.arrayValue?.contains { $0["kind"]?.stringValue == "amount_mismatch" } == true, "\(order)")
        #expect(try ledger.client.get("/v1/orders?attention=true", token: ledger.support)["orders"]?.arrayValue?.count == 1)
    }

    @Test("a correction retried with the same Idempotency-Key is 200 duplicate; an unknown order is 404; no reason is 400")
    func correctionErrors() throws {
        _ = try ledger.register("K-2")
        let body = #"{"status":6,"reason":"held for review"}"#
        let key = [("Idempotency-Key", "fix-K-2-1")]
        let first = try ledger.client.post("/v1/orders/K-2/corrections", token: ledger.auditor, json: body, headers: key)
        #expect(first.status == 201, "\(first)")
        let retry = try ledger.client.post("/v1/orders/K-2/corrections", token: ledger.auditor, json: body, headers: key)
        #expect(retry.status == 200, "\(retry)")
        #expect(retry["duplicate"]?.boolValue == true)

        let unknown = try ledger.client.post("/v1/orders/K-404/corrections", token: ledger.auditor, json: body)
        #expect(unknown.status == 404 && unknown.isProblem, "\(unknown)")
        let noReason = try ledger.client.post("/v1/orders/K-2/corrections", token: ledger.auditor, json: #"{"status":5}"#)
        #expect(noReason.status == 400 && noReason.isProblem, "\(noReason)")
        let badKey = try ledger.client.post("/v1/orders/K-2/corrections", token: ledger.auditor, json: body,
                                            headers: [("Idempotency-Key", String(repeating: "k", count: 129))])
        #expect(badKey.status == 400 && badKey.isProblem && badKey.text.contains("Idempotency-Key"), "\(badKey)")
    }
}
