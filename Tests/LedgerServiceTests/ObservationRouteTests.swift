import Foundation
import LedgerCore
import LedgerPostgres
@testable import LedgerService
import LedgerTestSupport
import Testing

/// http-api.md, observations: a provider query's answer recorded against an order.
@Suite("POST /v1/orders/{no}/observations: query results")
final class ObservationRouteTests {
    let ledger: LedgerFixture
    init() throws { ledger = try .start("routes") }
    deinit { ledger.stop() }

    @Test("a query observation answers 201 and moves the status; the same observation again is 200 with duplicate true")
    func observations() throws {
        _ = try ledger.register("O-1")
        let body = #"{"provider":"web3","response":{"code":0,"status":3,"statusText":"paid","txHash":"0xabc","amount":"40"},"observedAt":"2026-11-01T12:00:00Z"}"#
        let first = try ledger.client.post("/v1/orders/O-1/observations", token: ledger.ingest, json: body)
        #expect(first.status == 201, "\(first)")
        #expect(first["duplicate"]?.boolValue == false)
        #expect(first["order"]?["status"]?.int64Value == 3)
        #expect(first["order"]?["paid"]?.boolValue == true)
        #expect(first["order"]?["txHash"]?.stringValue == "0xabc")

        let again = try ledger.client.post("/v1/orders/O-1/observations", token: ledger.ingest, json: body)
        #expect(again.status == 200, "\(again)")
        #expect(again["duplicate"]?.boolValue == true)
        #expect(again["eventId"] == first["eventId"])
        #expect(try ledger.count("SELECT count(*) AS n FROM ledger.events WHERE stream = 'order-O-1'") == 2)
    }

    @Test("an observation from a provider without an adapter needs a status 1-6, and one naming another order is 400")
    func genericObservations() throws {
        _ = try ledger.register("O-2")
        let noStatus = try ledger.client.post("/v1/orders/O-2/observations", token: ledger.ingest,
                                              json: #"{"provider":"acme","response":{"state":"settled"}}"#)
        #expect(noStatus.status == 400 && noStatus.isProblem, "\(noStatus)")
        let outOfRange = try ledger.client.post("/v1/orders/O-2/observations", token: ledger.ingest,
                                                json: #"{"provider":"acme","response":{"status":7}}"#)
        #expect(outOfRange.status == 400 && outOfRange.isProblem, "\(outOfRange)")
        let otherOrder = try ledger.client.post("/v1/orders/O-2/observations", token: ledger.ingest,
                                                json: #"{"provider":"web3","response":{"code":0,"merchantOrderNo":"O-9","status":3}}"#)
        #expect(otherOrder.status == 400 && otherOrder.isProblem, "\(otherOrder)")
        let ok = try ledger.client.post("/v1/orders/O-2/observations", token: ledger.ingest,
                                        json: #"{"provider":"acme","response":{"status":2,"providerStatus":"pending_settlement"}}"#)
        #expect(ok.status == 201, "\(ok)")
        #expect(ok["order"]?["status"]?.int64Value == 2)
    }
}
