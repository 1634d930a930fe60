import Foundation
import LedgerCore
import LedgerPostgres
@testable import LedgerService
import LedgerTestSupport
import Testing

/// http-api.md, reading one order: the read model, as of a time, and its events.
@Suite("GET /v1/orders/{no} and its timeline")
final class OrderReadRouteTests {
    let ledger: LedgerFixture
    init() throws { ledger = try .start("routes") }
    deinit { ledger.stop() }

    @Test("an order reads back with every read-model field, emails masked except for auditors; an unknown order is 404")
    func getOrder() throws {
        _ = try ledger.register("G-1", extra: #","externalCustomerId":"alice@example.com""#)
        let order = try ledger.order("G-1")
        #expect(order.status == 200, "\(order)")
        #expect(order.header("Content-Type")?.hasPrefix("application/json") == true)
        let fields = Set(order.json?.objectFields?.map(\.0) ?? [])
        let required: Set = ["merchantOrderNo", "provider", "status", "statusName", "paid", "attention", "latePayment", "refunded",
                             "expectedAmount", "paidAmount", "asset", "providerOrderId", "txHash", "createdAt", "updatedAt",
                             "paidAt", "lastClientSignal", "conflicts", "eventCount", "lastPosition"]
        #expect(required.subtracting(fields).isEmpty, "missing \(required.subtracting(fields))")
        #expect(order["statusName"]?.stringValue == "awaiting_payment")
        #expect(order["eventCount"]?.int64Value == 1)

        #expect(!order.text.contains("alice@example.com"), "support sees emails masked: \(order)")
        #expect(order.text.contains("@example.com"))
        #expect(try !ledger.order("G-1", token: ledger.ingest).text.contains("alice@example.com"))
        #expect(try ledger.order("G-1", token: ledger.auditor)["externalCustomerId"]?.stringValue == "alice@example.com")

        let unknown = try ledger.order("G-404")
        #expect(unknown.status == 404 && unknown.isProblem, "\(unknown)")
        let invalid = try ledger.order("bad*no")
        #expect(invalid.status == 400 && invalid.isProblem, "\(invalid)")
    }

    @Test("asOf gives the state as the ledger knew it at that time; before the order existed it is 404; a bad time is 400")
    func getOrderAsOf() throws {
        _ = try ledger.register("A-1")
        let paid = try ledger.sendWeb3(LedgerFixture.web3Body("A-1", status: 3))
        #expect(paid.status == 200, "\(paid)")
        let events = try #require(ledger.client.get("/v1/orders/A-1/events", token: ledger.auditor)["events"]?.arrayValue)
        #expect(events.count == 2)
        let registeredAt = try #require(events.first?["recordedAt"]?.stringValue)
        let paidAt = try #require(events.last?["recordedAt"]?.stringValue)

        let then = try ledger.client.get("/v1/orders/A-1?asOf=\(registeredAt)", token: ledger.support)
        #expect(then.status == 200, "\(then)")
        #expect(then["status"]?.int64Value == 1)
        #expect(then["eventCount"]?.int64Value == 1)
        let later = try ledger.client.get("/v1/orders/A-1?asOf=\(paidAt)", token: ledger.support)
        #expect(later["status"]?.int64Value == 3, "\(later)")
        #expect(later["paid"]?.boolValue == true)
        #expect(try ledger.order("A-1")["status"]?.int64Value == 3)

        let before = try ledger.client.get("/v1/orders/A-1?asOf=2000-01-01T00:00:00Z", token: ledger.support)
        #expect(before.status == 404 && before.isProblem, "\(before)")
        // Only a date or a time with its offset, to the microsecond: nothing read in a zone
        // its writer never named, nothing cut without a word.
        for bad in ["yesterday", "2026-11-01T00:00:00", "2026-11-01%2000:00:00Z", "2026-11-01T00:00:00.1234567Z"] {
            let answer = try ledger.client.get("/v1/orders/A-1?asOf=\(bad)", token: ledger.support)
            #expect(answer.status == 400 && answer.isProblem && answer.text.contains("with its offset"), "\(bad): \(answer)")
        }
        let day = try ledger.client.get("/v1/orders/A-1?asOf=2000-01-01", token: ledger.support)
        #expect(day.status == 404 && day.isProblem, "a date is a time: \(day)")
        // An offset: its + sent as %2B is read; sent bare it decodes to a space, and the answer says so.
        let offset = try ledger.client.get("/v1/orders/A-1?asOf=\(paidAt.dropLast())%2B00:00", token: ledger.support)
        #expect(offset.status == 200 && offset.json?["status"]?.int64Value == 3, "\(offset)")
        let bare = try ledger.client.get("/v1/orders/A-1?asOf=\(paidAt.dropLast())+00:00", token: ledger.support)
        #expect(bare.status == 400 && bare.text.contains("%2B"), "\(bare)")
    }

    @Test("asOf goes by when the ledger recorded an event, not by the time the provider claims: a late webhook is not known earlier")
    func asOfUsesRecordedTime() throws {
        _ = try ledger.register("A-2")
        let registeredAt = try #require(ledger.client.get("/v1/orders/A-2/events", token: ledger.auditor)["events"]?
            .arrayValue?.first?["recordedAt"]?.stringValue)
        Thread.sleep(forTimeInterval: 0.05)
        // Signed 100 s before the registration, delivered after it.
        let late = try ledger.sendWeb3(LedgerFixture.web3Body("A-2", status: 3), timestamp: Timestamp.now().seconds - 100)
        #expect(late.status == 200, "\(late)")
        let then = try ledger.client.get("/v1/orders/A-2?asOf=\(registeredAt)", token: ledger.support)
        #expect(then["status"]?.int64Value == 1, "at the registration the ledger had not yet received the payment: \(then)")
        #expect(then["eventCount"]?.int64Value == 1)
        #expect(try ledger.order("A-2")["status"]?.int64Value == 3)
    }

    @Test("the timeline lists events oldest first with the status after each; only auditors see raw bodies and unmasked emails")
    func timeline() throws {
        _ = try ledger.register("L-1", extra: #","externalCustomerId":"bob@example.com""#)
        let now = Timestamp.now().seconds
        let confirming = LedgerFixture.web3Body("L-1", status: 2)
        #expect(try ledger.sendWeb3(confirming, timestamp: now - 10).status == 200)
        #expect(try ledger.sendWeb3(LedgerFixture.web3Body("L-1", status: 3), timestamp: now).status == 200)
        let signal = try ledger.client.post("/v1/orders/L-1/client-events", token: ledger.ingest,
                                            json: #"{"provider":"banxa","callback":"banxaDidDismiss","clientEventId":"3b7c2a4e-3f1d-4c8a-9e2b-5d6f7a8b9c0d"}"#)
        #expect(signal.status == 201)

        let support = try ledger.client.get("/v1/orders/L-1/events", token: ledger.support)
        #expect(support.status == 200, "\(support)")
        let events = try #require(support["events"]?.arrayValue)
        #expect(events.count == 4)
        let positions = events.compactMap { $0["position"]?.int64Value }
        #expect(positions == positions.sorted() && Set(positions).count == 4, "oldest first: \(positions)")
        #expect(events.map { $0["statusAfter"]?.int64Value } == [1, 2, 3, 3])
        #expect(events.map { $0["type"]?.stringValue } == ["OrderRegistered", "StatusObserved", "StatusObserved", "ClientSignal"])
        #expect(events.map { $0["source"]?.stringValue } == ["query", "webhook", "webhook", "client"])
        for field in ["eventId", "type", "source", "provider", "recordedAt", "observedAt", "verified", "payload", "statusAfter"] {
            #expect(events.allSatisfy { $0[field] != nil }, "every event has \(field)")
        }
        #expect(events[1]["verified"]?.boolValue == true, "a signed webhook is verified")
        #expect(events.allSatisfy { $0["raw"] == nil }, "support staff never see raw bodies")
        #expect(!support.text.contains("bob@example.com"))

        let auditor = try ledger.client.get("/v1/orders/L-1/events", token: ledger.auditor)
        let audited = try #require(auditor["events"]?.arrayValue)
        let raw = try #require(audited[1]["raw"]?.stringValue)
        #expect(Data(base64Encoded: raw).map(Array.init) == confirming, "the raw webhook body, byte for byte")
        #expect(auditor.text.contains("bob@example.com"))

        let unknown = try ledger.client.get("/v1/orders/L-404/events", token: ledger.support)
        #expect(unknown.status == 404 && unknown.isProblem, "\(unknown)")
    }

    @Test("a write is visible to a read that follows it at once")
    func readYourWrites() throws {
        _ = try ledger.register("RW-1")
        let base = Timestamp.now().seconds - 100
        for i in 0..<20 {
            let status = [2, 1, 6, 5][i % 4]
            let observedAt = Timestamp(seconds: base + Int64(i)).rfc3339
            let write = try ledger.client.post("/v1/orders/RW-1/observations", token: ledger.ingest,
                                               json: #"{"provider":"acme","response":{"status":\#(status)},"observedAt":"\#(observedAt)"}"#)
            #expect(write.status == 201, "\(write)")
            let read = try ledger.order("RW-1", token: ledger.ingest)
            #expect(read["status"]?.int64Value == Int64(status), "write \(i) not visible: \(read)")
            #expect(read["eventCount"]?.int64Value == Int64(i + 2))
        }
    }
}
