import Foundation
import LedgerCore
import LedgerTestSupport
import Testing

/// providers.md: keep unknown fields, and answer 400 only for a body that is not JSON
/// or lacks the order reference or status. A signed delivery that names its order and
/// status is stored, raw bytes whole, whatever its unmapped fields hold; what jsonb
/// cannot hold is listed in the event's metadata (`leftOut`).
@Suite("Signed webhooks with content jsonb cannot hold in fields the ledger does not map")
final class SignedUnmappedContentTests {
    let ledger: LedgerFixture
    init() throws { ledger = try .start("hostile_unmapped", keepDatabase: true) }
    deinit { ledger.stop() }

    /// The stored event of a delivery: its raw bytes and metadata.
    func stored(_ body: [UInt8]) throws -> (raw: [UInt8], metadata: JSONValue) {
        let r = try ledger.query("SELECT raw, metadata::text AS metadata FROM ledger.events WHERE idempotency_key = $1",
                                 [.text(LedgerFixture.web3Key(body))])
        #expect(r.count == 1)
        return (try r.bytes(0, "raw") ?? [], try JSONValue.parse(stored: try r.string(0, "metadata")))
    }

    @Test("each shape in an unmapped field is stored with its raw bytes whole, and the metadata says what was left out", arguments: [
        ("nul", #""note":"before\u0000after""#, "note", "\\u0000"),
        ("lone low surrogate", #""note":"x\udc00y""#, "note", "surrogate"),
        ("lone high surrogate", #""meta":{"name":"\ud800"}"#, "meta.name", "surrogate"),
        ("nesting deeper than 64", #""deep":"# + String(repeating: "[", count: 70) + String(repeating: "]", count: 70), "deep", "nested more than 64"),
        ("a repeated key in a nested unknown object", #""extra":{"k":1,"k":2}"#, "extra.k", "repeated"),
        ("a number numeric cannot hold", #""big":1e999999999"#, "big", "numeric"),
        ("numbers that grow past 1 MiB as jsonb stores them", #""wide":["# + Array(repeating: "1e131071", count: 9).joined(separator: ",") + "]",
         "wide[8]", "grow by more than 1048576 bytes"),
    ])
    func unmappedShapeIsStored(shape: String, field: String, path: String, reason: String) throws {
        let no = "SU-" + shape.split(separator: " ").joined(separator: "-")
        let body = LedgerFixture.web3Body(no, status: 3, extra: "," + field)
        let reply = try ledger.sendWeb3(body)
        #expect(reply.status == 200 && reply["code"]?.int64Value == 0 && reply["duplicate"]?.boolValue == false, "\(shape): \(reply)")
        let event = try stored(body)
        #expect(event.raw == body, "\(shape): the raw bytes are not the delivery's")
        let leftOut = event.metadata["leftOut"]?.arrayValue ?? []
        #expect(leftOut.count == 1, "\(shape): \(event.metadata)")
        #expect(leftOut.first?["path"]?.stringValue?.hasPrefix(path) == true, "\(shape): \(leftOut)")
        #expect(leftOut.first?["reason"]?.stringValue?.contains(reason) == true, "\(shape): \(leftOut)")
        // The order took the status, its timeline reads back with the note for auditors, and a redelivery is a duplicate.
        #expect(try ledger.order(no)["paid"]?.boolValue == true)
        let timeline = try ledger.client.get("/v1/orders/\(no)/events", token: ledger.auditor)
        #expect(timeline.status == 200 && timeline.text.contains("leftOut"), "\(timeline)")
        let again = try ledger.sendWeb3(body)
        #expect(again.status == 200 && again["duplicate"]?.boolValue == true, "\(again)")
        #expect(try ledger.verify() == [])
    }

    @Test("an API body whose numbers would grow past 1 MiB in jsonb is 400 naming where, and stores nothing")
    func apiNumbersThatExpandAreRefused() throws {
        #expect(try ledger.register("SU-WIDE").status == 201)
        let wide = "[" + Array(repeating: "1e131071", count: 9).joined(separator: ",") + "]"
        let reply = try ledger.client.post("/v1/orders/SU-WIDE/client-events", token: ledger.ingest, json: """
            {"provider":"web3","callback":"close","payload":{"n":\(wide)},"clientEventId":"5d7c2a4e-3f1d-4c8a-9e2b-5d6f7a8b9c0d"}
            """)
        #expect(reply.status == 400 && reply.isProblem && reply["detail"]?.stringValue?.contains("payload.n[8]") == true, "\(reply)")
        #expect(try ledger.count("SELECT count(*) AS n FROM ledger.events WHERE stream = 'order-SU-WIDE'") == 1)
    }

    @Test("a Banxa webhook with a NUL and a repeated key in its metadata object is stored, both listed")
    func banxaUnmappedContentIsStored() throws {
        let body = Array(#"{"order_id":"BX-SU","external_id":"SU-BANXA","status":"complete","metadata":{"a":"\u0000","a":"\udc00"}}"#.utf8)
        let nonce = String(Timestamp.now().microseconds / 1_000)
        let signature = BanxaWebhook.signature(secret: LedgerFixture.banxaSecret, nonce: nonce, body: body)
        let reply = try ledger.client.post("/v1/webhooks/banxa", body: body,
                                           headers: [("Authorization", "Bearer \(LedgerFixture.banxaAPIKey):\(signature):\(nonce)")])
        #expect(reply.status == 200, "\(reply)")
        let r = try ledger.query("SELECT raw, metadata::text AS metadata FROM ledger.events WHERE stream = 'order-SU-BANXA'")
        #expect(r.count == 1)
        #expect(try r.bytes(0, "raw") == body)
        let leftOut = try JSONValue.parse(stored: try r.string(0, "metadata"))["leftOut"]?.arrayValue ?? []
        // The NUL, the lone surrogate, and the repetition that kept only the last value.
        #expect(leftOut.count == 3 && leftOut.allSatisfy { $0["path"]?.stringValue == "metadata.a" }, "\(leftOut)")
        #expect(leftOut.contains { $0["reason"]?.stringValue?.contains("repeated") == true }, "\(leftOut)")
        #expect(try ledger.order("SU-BANXA")["status"]?.int64Value == 4)
    }

    @Test("a mapped field jsonb cannot hold is refused with a 400 naming it, and the signed delivery is kept in quarantine")
    func mappedFieldIsRefusedAndQuarantined() throws {
        for (field, name) in [(#""txHash":"0x\u0000""#, "txHash"), (#""amount":1e999999999"#, "amount")] {
            let body = Array(#"{"merchantOrderNo":"SU-MAPPED","status":3,\#(field)}"#.utf8)
            let reply = try ledger.sendWeb3(body)
            #expect(reply.status == 400 && reply.isProblem && reply["detail"]?.stringValue?.contains(name) == true, "\(reply)")
            let kept = try ledger.count("SELECT count(*) AS n FROM ledger.quarantine WHERE raw = $1", [.bytes(body)])
            #expect(kept == 1, "\(name): the refused signed delivery is not in quarantine")
        }
        let noStatus = Array(#"{"merchantOrderNo":"SU-MAPPED","note":"\u0000"}"#.utf8)
        let reply = try ledger.sendWeb3(noStatus)
        #expect(reply.status == 400 && reply.isProblem, "\(reply)")
        #expect(try ledger.count("SELECT count(*) AS n FROM ledger.quarantine WHERE raw = $1", [.bytes(noStatus)]) == 1)
        #expect(try ledger.count("SELECT count(*) AS n FROM ledger.events WHERE stream = 'order-SU-MAPPED'") == 0)
    }
}
