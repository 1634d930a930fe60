import Foundation
import LedgerCore
import LedgerTestSupport
import Testing

/// http-api.md: `GET /v1/quarantine` and `GET /v1/quarantine/{id}`, what the console's quarantine page reads.
@Suite("GET /v1/quarantine: auditors read the rejected deliveries, newest first, and one with its body")
final class QuarantineRouteTests {
    let ledger: LedgerFixture
    init() throws { ledger = try .start("quarantine_routes") }
    deinit { ledger.stop() }

    /// Sends `count` forged web3 webhooks (each a distinct body); all are quarantined.
    private func forge(_ count: Int, tag: String) throws {
        for n in 0..<count {
            let body = LedgerFixture.web3Body("Q-\(tag)-\(n)", status: 3)
            let reply = try ledger.sendWeb3(body, key: "not-the-key")
            #expect(reply.status == 401, "\(reply)")
        }
    }

    @Test("the list is newest first with time, source address, reason, size and redacted headers, and no body")
    func list() throws {
        try forge(3, tag: "list")
        let reply = try ledger.client.get("/v1/quarantine", token: ledger.auditor)
        #expect(reply.status == 200, "\(reply)")
        let deliveries = try #require(reply["deliveries"]?.arrayValue)
        #expect(deliveries.count == 3)
        let ids = deliveries.compactMap { $0["id"]?.int64Value }
        #expect(ids == ids.sorted(by: >), "newest first: \(ids)")
        let first = try #require(deliveries.first)
        #expect(first["reason"]?.stringValue == "bad_signature")
        #expect(first["sourceAddress"]?.stringValue == "127.0.0.1")
        #expect(first["provider"]?.stringValue == "web3")
        #expect(first["size"]?.int64Value == Int64(LedgerFixture.web3Body("Q-list-2", status: 3).count))
        #expect(first["receivedAt"]?.stringValue.flatMap { Timestamp.parse($0) } != nil)
        #expect(first["headers"]?["x-pay-timestamp"]?.stringValue != nil, "\(first)")
        #expect(first["body"] == nil, "the list leaves bodies out")
        #expect(reply["nextBefore"]?.isNull == true)
    }

    @Test("pages by before: limit rows, then nextBefore leads to the older ones, and the last page says null")
    func paging() throws {
        try forge(5, tag: "page")
        var seen: [Int64] = []
        var before: String?
        for _ in 0..<10 {
            let target = "/v1/quarantine?limit=2" + (before.map { "&before=" + $0 } ?? "")
            let reply = try ledger.client.get(target, token: ledger.auditor)
            #expect(reply.status == 200, "\(reply)")
            seen += reply["deliveries"]?.arrayValue?.compactMap { $0["id"]?.int64Value } ?? []
            guard let next = reply["nextBefore"]?.stringValue else { break }
            before = next
        }
        #expect(seen.count == 5 && Set(seen).count == 5 && seen == seen.sorted(by: >), "\(seen)")
    }

    @Test("one delivery adds its body as base64, byte for byte as received")
    func one() throws {
        let body = LedgerFixture.web3Body("Q-one", status: 3, extra: #","note":"<script>alert(1)</script>""#)
        #expect(try ledger.sendWeb3(body, key: "not-the-key").status == 401)
        let id = try #require(try ledger.client.get("/v1/quarantine?limit=1", token: ledger.auditor)["deliveries"]?.arrayValue?.first?["id"]?.int64Value)
        let reply = try ledger.client.get("/v1/quarantine/\(id)", token: ledger.auditor)
        #expect(reply.status == 200, "\(reply)")
        #expect(reply["body"]?.stringValue.flatMap { Data(base64Encoded: $0) }.map { [UInt8]($0) } == body)
        #expect(reply["reason"]?.stringValue == "bad_signature")
    }

    @Test("support gets 403; without a token 401")
    func roles() throws {
        for target in ["/v1/quarantine", "/v1/quarantine/1"] {
            let support = try ledger.client.get(target, token: ledger.support)
            #expect(support.status == 403 && support.isProblem, "\(support)")
            let none = try ledger.client.get(target)
            #expect(none.status == 401 && none.isProblem, "\(none)")
        }
    }

    @Test("a bad before or limit, or an id that is not a number, is 400; an unknown id is 404", arguments: [
        ("/v1/quarantine?before=yesterday", 400), ("/v1/quarantine?before=2026-13-01T00:00:00Z", 400),
        ("/v1/quarantine?before=2026-11-01T00:00:00", 400), ("/v1/quarantine?before=2026-11-01T00:00:00.1234567Z", 400),
        ("/v1/quarantine?before=2026-11-01", 200), ("/v1/quarantine?before=2026-11-01T00:00:00%2B01:00", 200),
        ("/v1/quarantine?limit=0", 400), ("/v1/quarantine?limit=501", 400), ("/v1/quarantine?limit=ten", 400),
        ("/v1/quarantine/abc", 400), ("/v1/quarantine/0", 400), ("/v1/quarantine/-1", 400), ("/v1/quarantine/+1", 400),
        ("/v1/quarantine/987654321", 404),
    ])
    func badInput(_ target: String, _ status: Int) throws {
        let reply = try ledger.client.get(target, token: ledger.auditor)
        #expect(reply.status == status && reply.isProblem == (status != 200), "\(target): \(reply)")
    }
}
