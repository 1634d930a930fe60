import LedgerCore
import LedgerPostgres
import LedgerTestSupport
import Testing

/// What an auditor needs years later, and inputs that must not distort the
/// record: signature evidence stored with every verified webhook, future
/// observation times refused, secrets kept out of the quarantine.
@Suite("Audit evidence and input guards")
struct AuditEvidenceTests {
    @Test("a verified web3 webhook keeps its timestamp and signature headers, and they re-verify the stored raw body")
    func web3Evidence() throws {
        let f = try LedgerFixture.start("evidence")
        defer { f.stop() }
        let body = LedgerFixture.web3Body("AE-1", status: 3)
        let ts = String(Timestamp.now().seconds * 1000 + 123)          // the 13-digit millisecond form
        #expect(try f.client.post("/v1/webhooks/web3", body: body, headers: LedgerFixture.web3Headers(body, timestamp: ts)).status == 200)
        let row = try f.query("""
            SELECT metadata->'signedWith'->>'X-Pay-Timestamp' AS ts, metadata->'signedWith'->>'X-Pay-Signature' AS sig,
                   encode(raw, 'hex') AS raw FROM ledger.events WHERE source = 'webhook'
            """)
        #expect(try row.string(0, "ts") == ts)
        let raw = Hex.decode(try row.string(0, "raw")) ?? []
        #expect(raw == body)
        #expect(Web3Webhook.signature(key: "key-new", timestamp: try row.string(0, "ts"), body: raw) == (try row.string(0, "sig")))
    }

    @Test("a verified Banxa webhook keeps its signature, nonce and path, never the API key")
    func banxaEvidence() throws {
        let f = try LedgerFixture.start("evidence")
        defer { f.stop() }
        let body = Array(#"{"order_id":"b1","status":"complete","status_date":"2024-01-31 12:48:36","external_id":"AE-2","crypto_coin":"ETH","crypto_amount":"0.01"}"#.utf8)
        let nonce = String(Timestamp.now().microseconds / 1000)
        let signature = BanxaWebhook.signature(secret: LedgerFixture.banxaSecret, nonce: nonce, body: body)
        let reply = try f.client.post("/v1/webhooks/banxa", body: body,
                                      headers: [("Authorization", "Bearer \(LedgerFixture.banxaAPIKey):\(signature):\(nonce)")])
        #expect(reply.status == 200)
        let metadata = try f.query("SELECT metadata::text AS m FROM ledger.events WHERE source = 'webhook'").string(0, "m")
        #expect(metadata.contains(signature) && metadata.contains(nonce) && metadata.contains("/v1/webhooks/banxa"))
        #expect(!metadata.contains("Bearer"))
    }

    @Test("an observation dated beyond the clock tolerance is refused with 400 and stores nothing")
    func futureObservation() throws {
        let f = try LedgerFixture.start("evidence")
        defer { f.stop() }
        #expect(try f.register("AE-3").status == 201)
        let reply = try f.client.post("/v1/orders/AE-3/observations", token: f.ingest,
                                      json: #"{"provider":"acme","response":{"status":5},"observedAt":"2999-01-01T00:00:00Z"}"#)
        #expect(reply.status == 400)
        #expect(reply.text.contains("future"))
        #expect(try f.count("SELECT count(*) AS n FROM ledger.events WHERE stream = 'order-AE-3'") == 1)
    }

    @Test("an SDK callback dated more than a day ahead is refused with 400 and stores nothing; an app clock minutes fast is fine")
    func futureClientEvent() throws {
        let f = try LedgerFixture.start("evidence")
        defer { f.stop() }
        #expect(try f.register("AE-5").status == 201)
        let fast = Timestamp(microseconds: Timestamp.now().microseconds + 600 * 1_000_000).rfc3339
        let skewed = try f.client.post("/v1/orders/AE-5/client-events", token: f.ingest, json: """
            {"provider":"banxa","callback":"banxaDidDismiss","payload":{},"clientEventId":"6b7c2a4e-3f1d-4c8a-9e2b-5d6f7a8b9c0d","occurredAt":"\(fast)"}
            """)
        #expect(skewed.status == 201, "an app clock 10 minutes fast: \(skewed)")
        let reply = try f.client.post("/v1/orders/AE-5/client-events", token: f.ingest, json: """
            {"provider":"banxa","callback":"banxaDidDismiss","payload":{},"clientEventId":"5b7c2a4e-3f1d-4c8a-9e2b-5d6f7a8b9c0d","occurredAt":"2999-01-01T00:00:00Z"}
            """)
        #expect(reply.status == 400 && reply.isProblem, "\(reply)")
        #expect(reply.text.contains("future"))
        #expect(try f.count("SELECT count(*) AS n FROM ledger.events WHERE stream = 'order-AE-5'") == 2)
    }

    @Test("the quarantine redacts any header that looks like a credential, not only the known ones")
    func quarantineRedactsByName() throws {
        let f = try LedgerFixture.start("evidence")
        defer { f.stop() }
        let body = LedgerFixture.web3Body("AE-4", status: 3)
        var headers = LedgerFixture.web3Headers(body, timestamp: String(Timestamp.now().seconds), key: "wrong")
        headers.append(("X-Api-Secret", "hunter2"))
        headers.append(("X-Trace", "visible"))
        #expect(try f.client.post("/v1/webhooks/web3", body: body, headers: headers).status == 401)
        let stored = try f.query("SELECT headers::text AS h FROM ledger.quarantine").string(0, "h")
        #expect(!stored.contains("hunter2"))
        #expect(stored.contains("visible"))
    }

    @Test("a filter given twice is refused with 400 rather than silently collapsed")
    func repeatedFilter() throws {
        let f = try LedgerFixture.start("evidence")
        defer { f.stop() }
        #expect(try f.client.get("/v1/orders?status=1&status=2", token: f.support).status == 400)
    }
}
