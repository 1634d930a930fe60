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
    }
}

/// Prepared statements live with their server session; the connection must notice
/// when that session is gone and prepare again.
@Suite("Prepared statements")
struct PreparedStatementTests {
    @Test("a prepared statement is prepared once, and again after a reconnect, a DISCARD ALL or a rolled-back transaction")
    func preparedSurvivesReconnect() throws {
        let db = try TestDatabase.create("prepared")
        defer { LedgerFixture.drop(db) }
        let c = try PostgresConnection(connectionString: db.url)
        defer { c.close() }
        let sql = "SELECT $1::int + 1 AS n, pg_backend_pid() AS pid"
        let first = try c.query(sql, [1], prepared: true)
        #expect(try first.int64(0, "n") == 2)
        #expect(try c.query(sql, [2], prepared: true).int64(0, "n") == 3)
        #expect(c.preparedStatementCount == 1)
        let row = try #require(try c.firstRow(sql, [41], prepared: true))
        #expect(row.first == Array("42".utf8))

        // The server ends the session: the next use may fail, the one after reconnects and prepares again.
        let admin = try PostgresConnection(connectionString: db.url)
        defer { admin.close() }
        try admin.query("SELECT pg_terminate_backend($1::int)", [.text(try first.string(0, "pid"))])
        _ = try? c.query(sql, [3], prepared: true)
        let after = try c.query(sql, [4], prepared: true)
        #expect(try after.int64(0, "n") == 5)
        #expect(try after.string(0, "pid") != (try first.string(0, "pid")))
        #expect(c.preparedStatementCount == 1)

        // The session forgets its statements behind our back.
        _ = try c.query("DISCARD ALL")
        #expect(try c.query(sql, [5], prepared: true).int64(0, "n") == 6)

        // Prepared inside a transaction that rolls back.
        let other = "SELECT $1::text || 'x' AS t"
        _ = try? c.transaction { c -> Int in
            _ = try c.query(other, ["a"], prepared: true)
            throw PostgresError.unexpectedResult("roll back")
        }
        #expect(try c.query(other, ["b"], prepared: true).string(0, "t") == "bx")
        #expect(try c.firstRow("SELECT 1 WHERE false", prepared: true) == nil)
        #expect(try c.firstRow("SELECT NULL::text, ''::text") == [nil, []])
    }

    @Test("with a statement timeout, a server that stops answering is given up on the client side too")
    func frozenServerIsGivenUp() throws {
        let db = try TestDatabase.create("frozen")
        defer { LedgerFixture.drop(db) }
        let pool = ConnectionPool(configuration: DatabaseConfiguration(connectionString: db.url, poolSize: 1,
                                                                       statementTimeoutSeconds: 0.5))
        defer { pool.close() }
        let sql = "SELECT pg_backend_pid() AS pid"
        let pid = try pool.withConnection { try $0.query(sql, [], prepared: true).int64(0, "pid") }
        // A stopped backend neither answers nor lets its statement timeout fire.
        guard kill(pid_t(pid), SIGSTOP) == 0 else {
            Issue.record("cannot stop backend \(pid) (the tests run as a user who may not signal it)")
            return
        }
        defer { kill(pid_t(pid), SIGCONT) }
        let started = Date()
        #expect(throws: PostgresError.self) { try pool.withConnection { try $0.query(sql, [], prepared: true) } }
        let waited = Date().timeIntervalSince(started)
        #expect(waited >= 2 && waited < 5, "gave up after \(waited) s")
        kill(pid_t(pid), SIGCONT)
        // The pool dropped that session; the next read gets a new one.
        let next = try pool.withConnection { try $0.query(sql, [], prepared: true).int64(0, "pid") }
        #expect(next != pid)
    }

    @Test("a pool with a statement timeout cancels a statement that runs longer")
    func statementTimeout() throws {
        let db = try TestDatabase.create("stmt_timeout")
        defer { LedgerFixture.drop(db) }
        let pool = ConnectionPool(configuration: DatabaseConfiguration(connectionString: db.url, poolSize: 1,
                                                                       statementTimeoutSeconds: 0.2))
        defer { pool.close() }
        let started = Date()
        #expect(throws: PostgresError.self) { try pool.withConnection { try $0.query("SELECT pg_sleep(5)") } }
        #expect(Date().timeIntervalSince(started) < 3)
        // A cancelled statement is the database being slow or locked now: 503 with Retry-After, not 500.
        do {
            try pool.withConnection { _ = try $0.query("SELECT pg_sleep(5)") }
            Issue.record("the statement was not cancelled")
        } catch let error as PostgresError {
            #expect(error.sqlState == "57014" && error.isUnavailable, "\(error)")
        }
        #expect(try pool.withConnection { try $0.query("SELECT 1 AS n").int64(0, "n") } == 1)
    }
}
