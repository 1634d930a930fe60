import Foundation
import LedgerCore
import LedgerPostgres
import Testing

/// What a webhook's event keeps (providers.md: every input byte for byte, beside
/// its parsed form): the body as received in `raw`, and in the payload the
/// observation mapped from it, not a second copy of the body. Support reads the
/// payload; raw bodies are for auditors (http-api.md).
@Suite("A webhook's stored payload and raw body")
final class StoredPayloadTests {
    let ledger: LedgerFixture
    init() throws { ledger = try .start("payloads") }
    deinit { ledger.stop() }

    @Test("the raw body is kept byte for byte; the payload holds the mapped fields, not the body again")
    func payloadWithoutBody() throws {
        let body = LedgerFixture.web3Body("P-1", status: 3, extra: #","payAddress":"0xabc","unknownField":{"x":1}"#)
        #expect(try ledger.sendWeb3(body).status == 200)
        let row = try ledger.query("SELECT payload::text AS payload, raw FROM ledger.events WHERE idempotency_key = $1",
                                   [.text(LedgerFixture.web3Key(body))])
        #expect(row.count == 1)
        let payload = try JSONValue.parse(try row.string(0, "payload"))
        #expect(try row.bytes(0, "raw") == body, "the body as received")
        #expect(payload["body"] == nil, "no second copy of the body: \(payload)")
        #expect(payload["status"] == .integer(3) && payload["providerOrderId"]?.stringValue == "GW-P-1", "\(payload)")
        #expect(!(try row.string(0, "payload")).contains("unknownField"))

        let auditorView = try ledger.client.get("/v1/orders/P-1/events", token: ledger.auditor)
        let raw = auditorView.json?["events"]?.arrayValue?.first?["raw"]?.stringValue
        #expect(raw.flatMap { Data(base64Encoded: $0) }.map(Array.init) == body, "auditors read the raw body")
        let supportView = try ledger.client.get("/v1/orders/P-1/events", token: ledger.support)
        #expect(supportView.status == 200)
        #expect(!supportView.text.contains("unknownField") && !supportView.text.contains("0xabc"),
                "support sees the mapped fields, not the provider's body: \(supportView.text)")
    }

    /// An event stored before the adapters stopped copying the body into the payload
    /// has the same key (the hash of the raw body) and another payload: its
    /// redelivery is the same delivery, so a duplicate, not a 409.
    @Test("a redelivery of a webhook stored with the body in its payload (an earlier version) is a duplicate, not a conflict")
    func redeliveryAcrossTheUpgrade() throws {
        let body = LedgerFixture.web3Body("P-2", status: 2)
        let timestamp = String(Timestamp.now().seconds)
        let headers = Dictionary(uniqueKeysWithValues: LedgerFixture.web3Headers(body, timestamp: timestamp)
            .map { ($0.0.lowercased(), $0.1) })
        let (_, event) = try Web3Webhook.ingest(headers: headers, body: body, keys: LedgerFixture.web3Keys, now: .now())
        guard case .observed(var observation) = event else {
            Issue.record("a web3 webhook did not map to an observation: \(event)")
            return
        }
        observation.body = try JSONValue.parse(body)   // the payload as the earlier version wrote it
        let earlier = NewEvent(stream: observation.merchantOrderNo.stream, type: EventType.statusObserved, source: "webhook",
                               payloadJSON: try #require(JSONBText.string(LedgerEvent.observed(observation).payload)),
                               raw: body, metadataJSON: #"{"verifiedBy":"signature"}"#,
                               idempotencyKey: observation.idempotencyKey, observedAt: observation.observedAt)
        let c = try ledger.connect()
        let stored = try c.transaction { try EventStore().append([earlier], on: $0) }
        let receipt = try #require(stored.first?.receipt)

        let reply = try ledger.sendWeb3(body)
        #expect(reply.status == 200, "\(reply)")
        #expect(reply.json?["duplicate"] == .bool(true), "\(reply)")
        #expect(reply.json?["eventId"]?.stringValue == receipt.eventID)
        #expect(try ledger.storedCount(web3Body: body) == 1)
    }
}
