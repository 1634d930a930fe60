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
        // Counted before the answer, as on every other path: no wait here.
        #expect(try ledger.count("SELECT coalesce(sum(count), 0) AS n FROM ledger.redeliveries WHERE position = $1",
                                 [.int(receipt.position)]) == 1, "counted as a redelivery of the stored event (lifecycle.md rule 7)")
    }

    static let queryBody = #"{"provider":"web3","response":{"code":0,"status":3,"statusText":"paid","txHash":"0xq1","amount":"40"},"observedAt":"2026-11-01T12:00:00Z"}"#

    @Test("a query report stored with the response in its payload (an earlier version), reported again, is a duplicate")
    func queryReportAcrossTheUpgrade() throws {
        #expect(try ledger.register("Q-1").status == 201)
        let no = try MerchantOrderNo("Q-1")
        guard case .observed(var observation) = try OrderRequests.observation(
            merchantOrderNo: no, body: Array(Self.queryBody.utf8), receivedAt: .now()) else {
            Issue.record("a web3 query report did not map to an observation")
            return
        }
        observation.body = try JSONValue.parse(Array(#"{"code":0,"status":3,"statusText":"paid","txHash":"0xq1","amount":"40"}"#.utf8))
        let earlier = NewEvent(stream: no.stream, type: EventType.statusObserved, source: "query",
                               payloadJSON: try #require(JSONBText.string(LedgerEvent.observed(observation).payload)),
                               raw: Array(Self.queryBody.utf8), metadataJSON: #"{"verifiedBy":"token:ingest"}"#,
                               idempotencyKey: observation.idempotencyKey, observedAt: observation.observedAt)
        let c = try ledger.connect()
        let receipt = try #require(try c.transaction { try EventStore().append([earlier], on: $0) }.first?.receipt)

        let reply = try ledger.client.post("/v1/orders/Q-1/observations", token: ledger.ingest, json: Self.queryBody)
        #expect(reply.status == 200, "\(reply)")
        #expect(reply["duplicate"]?.boolValue == true)
        #expect(reply["eventId"]?.stringValue == receipt.eventID)
    }

    /// Before keys named the order, a query report's key was `provider:query:hash:time`.
    /// A report stored under that key, re-reported after the upgrade, is the same report.
    @Test("a query report stored under the key that did not name the order, reported again, is a duplicate; another order's is new")
    func queryReportUnderTheLegacyKey() throws {
        #expect(try ledger.register("Q-L").status == 201)
        #expect(try ledger.register("Q-M").status == 201)
        let no = try MerchantOrderNo("Q-L")
        guard case .observed(let observation) = try OrderRequests.observation(
            merchantOrderNo: no, body: Array(Self.queryBody.utf8), receivedAt: .now()) else {
            Issue.record("a web3 query report did not map to an observation")
            return
        }
        let legacy = try #require(QueryKey.legacy(of: observation.idempotencyKey, orderNo: no))
        #expect(!legacy.contains("Q-L"), "\(legacy)")
        let earlier = NewEvent(stream: no.stream, type: EventType.statusObserved, source: "query",
                               payloadJSON: try #require(JSONBText.string(LedgerEvent.observed(observation).payload)),
                               raw: Array(Self.queryBody.utf8), metadataJSON: #"{"verifiedBy":"token:ingest"}"#,
                               idempotencyKey: legacy, observedAt: observation.observedAt)
        let c = try ledger.connect()
        let receipt = try #require(try c.transaction { try EventStore().append([earlier], on: $0) }.first?.receipt)

        let reply = try ledger.client.post("/v1/orders/Q-L/observations", token: ledger.ingest, json: Self.queryBody)
        #expect(reply.status == 200, "\(reply)")
        #expect(reply["duplicate"]?.boolValue == true)
        #expect(reply["eventId"]?.stringValue == receipt.eventID)
        #expect(try ledger.count("SELECT count(*) AS n FROM ledger.events WHERE stream = $1", [.text(no.stream)]) == 2,
                "the registration and the one report")
        let counted = eventually(within: 5) {
            try ledger.count("SELECT coalesce(sum(count), 0) AS n FROM ledger.redeliveries WHERE position = $1",
                             [.int(receipt.position)]) == 1
        }
        #expect(counted, "counted as a redelivery of the stored report")

        let other = try ledger.client.post("/v1/orders/Q-M/observations", token: ledger.ingest, json: Self.queryBody)
        #expect(other.status == 201, "another order's identical report is its own: \(other)")
        #expect(other["eventId"]?.stringValue != receipt.eventID)
    }

    /// A query report's key names the order: two orders reporting the same response at
    /// the same time (a provider without an adapter sends `{"status": 3}`) are two reports.
    @Test("two orders' identical query reports at the same time are two events, each a duplicate of itself only")
    func identicalReportOfAnotherOrder() throws {
        #expect(try ledger.register("Q-A").status == 201)
        #expect(try ledger.register("Q-B").status == 201)
        let generic = #"{"provider":"acmepay","response":{"status":3},"observedAt":"2026-11-01T12:00:00Z"}"#
        let first = try ledger.client.post("/v1/orders/Q-A/observations", token: ledger.ingest, json: generic)
        #expect(first.status == 201, "\(first)")
        let second = try ledger.client.post("/v1/orders/Q-B/observations", token: ledger.ingest, json: generic)
        #expect(second.status == 201, "\(second)")
        #expect(second["eventId"]?.stringValue != first["eventId"]?.stringValue)
        let again = try ledger.client.post("/v1/orders/Q-B/observations", token: ledger.ingest, json: generic)
        #expect(again.status == 200 && again["duplicate"]?.boolValue == true, "\(again)")
        #expect(again["eventId"]?.stringValue == second["eventId"]?.stringValue)
        let b = try ledger.client.get("/v1/orders/Q-B", token: ledger.support)
        #expect(b["status"]?.int64Value == 3 && b["paid"]?.boolValue == true, "\(b)")
    }
}
