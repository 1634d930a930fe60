import Foundation
@testable import ledger
@testable import LedgerAPI
import LedgerCore
import LedgerPostgres
@testable import LedgerService
import LedgerTestSupport
import Synchronization
import Testing

/// The fast read path: GET /v1/orders/{no} answers the document stored with the
/// state (migration 014), byte for byte what deriving it from the state gives.
@Suite("Reads answer precomputed documents equal to the state's JSON")
final class ReadPathTests {
    let ledger: LedgerFixture
    init() throws { ledger = try .start("reads") }
    deinit { ledger.stop() }

    /// What the old path sent: the stored state, reloaded, rendered, masked for non-auditors.
    private func derived(_ no: String, masked: Bool) throws -> [UInt8] {
        let c = try ledger.connect()
        defer { c.close() }
        let (state, _) = try #require(try OrderReadModel().load(try MerchantOrderNo(no), on: c))
        let value = state.toJSON()
        return JSONSerializer.bytes(masked ? EmailMasking.mask(value) : value)
    }

    @Test("the stored documents are the state's JSON, masked for support and ingest and unmasked for auditors")
    func documentsEqualDerivedJSON() throws {
        _ = try ledger.register("D-1", extra: #","externalCustomerId":"alice@example.com","providerResponse":{"note":"bob%40example.org"}"#)
        #expect(try ledger.sendWeb3(LedgerFixture.web3Body("D-1", status: 3, amount: "40")).status == 200)
        _ = try ledger.register("D-2")

        for no in ["D-1", "D-2"] {
            let support = try ledger.order(no, token: ledger.support)
            let ingest = try ledger.order(no, token: ledger.ingest)
            let auditor = try ledger.order(no, token: ledger.auditor)
            #expect(support.status == 200 && ingest.status == 200 && auditor.status == 200)
            #expect(support.header("Content-Type") == "application/json")
            #expect(support.body == (try derived(no, masked: true)), "\(support)")
            #expect(ingest.body == (try derived(no, masked: true)), "\(ingest)")
            #expect(auditor.body == (try derived(no, masked: false)), "\(auditor)")
        }
        let masked = try ledger.order("D-1", token: ledger.support)
        #expect(masked["externalCustomerId"]?.stringValue == "a***@example.com")
        #expect(try ledger.order("D-1", token: ledger.auditor)["externalCustomerId"]?.stringValue == "alice@example.com")
        #expect(masked["paid"] == .bool(true))

        // Stored: the masked column only where masking changes something.
        let rows = try ledger.query("""
            SELECT merchant_order_no, document, document_masked, document_version FROM ledger.orders ORDER BY 1
            """)
        #expect(rows.count == 2)
        #expect(try rows.value(0, "document_masked") != nil)
        #expect(try rows.value(1, "document_masked") == nil, "D-2 holds no e-mail address")
        #expect(try rows.int64(0, "document_version") == Int64(OrderDocuments.version))
        #expect(Array(try rows.string(1, "document").utf8) == (try derived("D-2", masked: false)))
        #expect(try ledger.verify().isEmpty)
    }

    @Test("concurrent reads share batches, and each request gets its own order's document in its own masking")
    func batchedReadsNoCrossTalk() throws {
        let numbers = (0..<40).map { "C-\($0)" }
        for no in numbers { _ = try ledger.register(no, extra: #","externalCustomerId":"\#(no.lowercased())@example.com""#) }
        let expected = try numbers.map { (try derived($0, masked: true), try derived($0, masked: false)) }
        let failures = Mutex<[String]>([])
        let threads = (0..<16).map { thread in
            Thread { [ledger] in
                for round in 0..<40 {
                    let index = (thread * 7 + round) % numbers.count
                    let auditor = (thread + round) % 3 == 0
                    guard let response = try? ledger.order(numbers[index], token: auditor ? ledger.auditor : ledger.support) else {
                        failures.withLock { $0.append("no answer for \(numbers[index])") }
                        continue
                    }
                    let want = auditor ? expected[index].1 : expected[index].0
                    if response.status != 200 || response.body != want {
                        failures.withLock { $0.append("\(numbers[index]) auditor=\(auditor): \(response.status)") }
                    }
                }
            }
        }
        threads.forEach { $0.start() }
        let started = Date()
        while threads.contains(where: { !$0.isFinished }) && Date().timeIntervalSince(started) < 60 { usleep(10_000) }
        let finished = threads.allSatisfy { $0.isFinished }
        let failed = failures.withLock { $0 }
        #expect(finished)
        #expect(failed == [])
        #expect(try ledger.order("C-missing").status == 404)
    }

    @Test("a row without a current document (older rows, another rendering version) is derived from its state")
    func staleDocumentsAreDerived() throws {
        _ = try ledger.register("S-1", extra: #","externalCustomerId":"carol@example.com""#)
        _ = try ledger.register("S-2", extra: #","externalCustomerId":"dave@example.com""#)
        let before = try ledger.order("S-1", token: ledger.support).body
        // As the service role may not alter documents, the owner fakes an old row and an old version.
        _ = try ledger.query("UPDATE ledger.orders SET document = NULL, document_masked = NULL, document_version = NULL WHERE merchant_order_no = 'S-1'")
        _ = try ledger.query("UPDATE ledger.orders SET document = '{\"stale\":true}', document_masked = NULL, document_version = $1 WHERE merchant_order_no = 'S-2'",
                         [.int(Int64(OrderDocuments.version + 1))])
        for no in ["S-1", "S-2"] {
            let support = try ledger.order(no, token: ledger.support)
            let auditor = try ledger.order(no, token: ledger.auditor)
            #expect(support.body == (try derived(no, masked: true)), "\(support)")
            #expect(auditor.body == (try derived(no, masked: false)), "\(auditor)")
        }
        #expect(try ledger.order("S-1", token: ledger.support).body == before)
        #expect(try ledger.order("S-9").status == 404)
    }

    @Test("the orders list is made of the same documents, byte for byte what the derived list was")
    func listEqualsDerived() throws {
        _ = try ledger.register("L-1", extra: #","externalCustomerId":"frank@example.com""#)
        _ = try ledger.register("L-2")
        _ = try ledger.register("L-3", extra: #","externalCustomerId":"gina@example.com""#)
        _ = try ledger.query("UPDATE ledger.orders SET document = NULL, document_masked = NULL, document_version = NULL WHERE merchant_order_no = 'L-3'")
        let c = try ledger.connect()
        defer { c.close() }
        for (token, masked) in [(ledger.support, true), (ledger.auditor, false)] {
            var cursor: String?
            var seen: [String] = []
            repeat {
                let reply = try ledger.client.get("/v1/orders?limit=2" + (cursor.map { "&cursor=" + $0 } ?? ""), token: token)
                #expect(reply.status == 200, "\(reply)")
                let numbers = try #require(reply["orders"]?.arrayValue).compactMap { $0["merchantOrderNo"]?.stringValue }
                let states = try numbers.map { no in try #require(try OrderReadModel().load(try MerchantOrderNo(no), on: c)).0.toJSON() }
                let next = reply["nextCursor"] ?? .null
                let expected: JSONValue = .object([("orders", .array(states)), ("nextCursor", next)])
                #expect(reply.body == JSONSerializer.bytes(masked ? EmailMasking.mask(expected) : expected), "\(reply)")
                seen += numbers
                cursor = next.stringValue
            } while cursor != nil
            #expect(Set(seen) == ["L-1", "L-2", "L-3"])
        }
        #expect(try ledger.client.get("/v1/orders?q=nobody", token: ledger.support).text == #"{"orders":[],"nextCursor":null}"#)
    }

    @Test("ledger rebuild writes every document again")
    func rebuildFillsDocuments() throws {
        _ = try ledger.register("B-1", extra: #","externalCustomerId":"erin@example.com""#)
        _ = try ledger.register("B-2")
        _ = try ledger.query("UPDATE ledger.orders SET document = NULL, document_masked = NULL, document_version = NULL")
        var cli = LedgerCLI(environment: LedgerFixture.environment(databaseURL: ledger.databaseURL), executablePath: "/nonexistent/ledger")
        cli.output = { _ in }
        #expect(cli.run(["rebuild"]) == 0)
        let rows = try ledger.query("""
            SELECT count(*) AS n FROM ledger.orders WHERE document IS NOT NULL AND document_version = $1
            """, [.int(Int64(OrderDocuments.version))])
        #expect(try rows.int64(0, "n") == 2)
        #expect(try ledger.order("B-1", token: ledger.support).body == (try derived("B-1", masked: true)))
        #expect(try ledger.order("B-1", token: ledger.auditor).body == (try derived("B-1", masked: false)))
    }

    @Test("only quick reads run on the polling threads: every write and readyz go to the workers")
    func inlineRoutes() {
        for route in Route.allCases {
            if route.method != "GET" || route == .readyz || route.rawValue.hasPrefix("export_") {
                #expect(!route.inline, "\(route.rawValue) must run on a worker")
            }
        }
        #expect(Route.getOrder.inline)   // with asOf; without, reads are batched (DocumentBatcher)
    }

    @Test("the masking shortcut: only JSON holding @ or %40 is masked at all")
    func maskingShortcut() {
        #expect(!OrderDocuments.mayHoldEmail(Array(#"{"a":"b%4","c":"%"}"#.utf8)))
        #expect(OrderDocuments.mayHoldEmail(Array(#"{"a":"x@y.z"}"#.utf8)))
        #expect(OrderDocuments.mayHoldEmail(Array(#"{"a":"x%40y.z"}"#.utf8)))
        #expect(OrderDocuments.mayHoldEmail(Array(#"{"x@y.z":1}"#.utf8)))
        #expect(!OrderDocuments.mayHoldEmail([]))
        #expect(OrderDocuments.mayHoldEmail(Array("%4%40".utf8)))
        #expect(OrderDocuments.mayHoldEmail(Array("%%40".utf8)))
        #expect(!OrderDocuments.mayHoldEmail(Array("40%4".utf8)))
        // Against the plain definition, on seeded text of the marks' bytes.
        var rng = HostileJSON.Seeded(seed: 0x40)
        let alphabet = Array("%40@a".utf8)
        for _ in 0..<3_000 {
            let text = (0..<Int(rng.next() % 12)).map { _ in alphabet[Int(rng.next() % 5)] }
            let plain = text.contains(UInt8(ascii: "@")) || String(decoding: text, as: UTF8.self).contains("%40")
            #expect(OrderDocuments.mayHoldEmail(text) == plain, "\(String(decoding: text, as: UTF8.self))")
        }
    }
}
