import Foundation
@testable import ledger
import LedgerCore
import LedgerPostgres
@testable import LedgerService
import LedgerTestSupport
import Testing

/// A superuser who turns the triggers off can rewrite an event; nothing that folds the
/// log into state may then show a state: verify names the position, rebuild refuses and
/// leaves the read models as they were, replay, `asOf`, the timeline and the events
/// export each refuse plainly. And a read model edited by hand is named, order and field.
@Suite("A tampered log is never projected")
struct TamperedLogTests {
    let db: TestDatabase
    var env: [String: String] { ["DATABASE_URL": db.url] }
    init() throws { db = try TestDatabase.create("tamper") }

    /// Rewrites the payload of the event at `position` as a superuser with the triggers off;
    /// with `rehash`, its stored hash too, recomputed from the chain before it (a forger
    /// who covers that one event, not the rest of the chain).
    static func tamper(_ c: PostgresConnection, position: Int64, path: String, value: String, rehash: Bool = false) throws {
        try c.query("SET session_replication_role = replica")
        defer { _ = try? c.query("SET session_replication_role = origin") }
        try c.query("UPDATE ledger.events SET payload = jsonb_set(payload, $2::text[], $3::jsonb) WHERE position = $1",
                    [.int(position), .text(path), .text(value)])
        if rehash { try ChainRewrite.rehash(position, on: c) }
    }

    /// Every row of both read models, with where it lies on disk: equal only if nothing was rewritten.
    static func readModels(_ c: PostgresConnection) throws -> String {
        let r = try c.query("""
            SELECT coalesce((SELECT string_agg(o.ctid::text || ' ' || o::text, E'\\n' ORDER BY o.merchant_order_no) FROM ledger.orders o), '')
                   || E'\\n--\\n' ||
                   coalesce((SELECT string_agg(n.ctid::text || ' ' || n::text, E'\\n' ORDER BY n.enrollment_ref) FROM ledger.enrollments n), '')
                   AS all_rows
            """)
        return try r.string(0, "all_rows")
    }

    @Test("an event's payload edited with the triggers off: verify names the position; rebuild exits 1 naming it and the read models are byte for byte unchanged")
    func rebuildRefuses() throws {
        try TestWrites(pool: db.pool(size: 1)).registerAndPay("TL-1")   // positions 1, 2
        try TestWrites(pool: db.pool(size: 1)).registerAndPay("TL-2")   // positions 3, 4
        try TestWrites(pool: db.pool(size: 1)).enrollment("TE-1")        // position 5
        let c = try db.connect()
        let before = try Self.readModels(c)
        #expect(before.contains("TL-1") && before.contains("TE-1"))
        try Self.tamper(c, position: 2, path: "{status}", value: "5")

        let verify = CLIRun()
        #expect(verify(["verify"], env: env) == 1)
        #expect(verify.errorLines.count == 1 && verify.errorLines[0].contains("position 2"), "\(verify.errorLines)")
        // Every check still runs and is reported: the replay of the log as it is now, and the summary.
        #expect(verify.output.contains { $0.hasPrefix("hash chain broken at position 2") }, "\(verify.output)")
        #expect(verify.output.contains { $0.hasPrefix("difference: order TL-1: ") && $0.contains("state.status") }, "\(verify.output)")
        #expect(verify.output.contains { $0.hasPrefix("  state.status: 1 (order TL-1)") }, "\(verify.output)")
        #expect(verify.output.last?.hasPrefix("checked: 5 events, 3 streams, 0 notes, ") == true, "\(verify.output)")
        #expect(verify.errorLines[0].contains("(and 1 more failure(s) above)"), "\(verify.errorLines)")

        let rebuild = CLIRun()
        #expect(rebuild(["rebuild"], env: env) == 1)
        #expect(rebuild.errorLines.count == 1, "\(rebuild.errorLines)")
        #expect(rebuild.errorLines.first?.contains("hash chain broken at position 2") == true, "\(rebuild.errorLines)")
        #expect(rebuild.errorLines.first?.contains("nothing was rebuilt") == true, "\(rebuild.errorLines)")
        #expect(!rebuild.output.contains { $0.hasPrefix("rebuilt") })
        #expect(try Self.readModels(c) == before, "the read models are exactly as they were")
        #expect(try c.query("SELECT status FROM ledger.orders WHERE merchant_order_no = 'TL-1'").string(0, "status") == "3")
    }

    @Test("a break further along the chain stops a rebuild that has already projected earlier pages, and all of it rolls back")
    func rebuildRollsBackEarlierPages() throws {
        try TestWrites(pool: db.pool(size: 1)).registrations(Rebuild.pageSize + 10)
        let c = try db.connect()
        let before = try Self.readModels(c)
        let position = Int64(Rebuild.pageSize + 5)
        try Self.tamper(c, position: position, path: "{amount}", value: "\"2.00\"")
        let rebuild = CLIRun()
        #expect(rebuild(["rebuild"], env: env) == 1)
        #expect(rebuild.errorLines.first?.contains("position \(position)") == true, "\(rebuild.errorLines)")
        #expect(try Self.readModels(c) == before)
    }

    @Test("an event deleted from the middle of an order's stream, the links around its other events intact: replay, asOf and the timeline refuse, naming the event after the gap")
    func streamGapRefused() throws {
        let c = try db.connect()
        defer { c.close() }
        func observe(_ no: String, _ status: Int) throws {
            let event = try QueryObservation.map(provider: "acme", merchantOrderNo: MerchantOrderNo(no), response: .object([("status", .number(String(status)))]),
                                                 observedAt: nil, receivedAt: Timestamp.now())
            _ = try c.transaction { try EventStore().append([EventMapping.newEvent(event, raw: nil, receipt: Receipt(requestID: "test", verifiedBy: "token:test"))], on: $0) }
        }
        try TestWrites(pool: db.pool(size: 1)).registerAndPay("TL-5")   // positions 1, 2
        try TestWrites(pool: db.pool(size: 1)).registerAndPay("TL-6")   // positions 3, 4
        try observe("TL-5", 2)                                          // position 5: TL-5's version 3
        try TestWrites(pool: db.pool(size: 1)).registerAndPay("TL-7")   // positions 6, 7
        try observe("TL-5", 3)                                          // position 8: TL-5's version 4
        try c.query("SET session_replication_role = replica")
        try c.query("DELETE FROM ledger.events WHERE position = 5")
        try c.query("SET session_replication_role = origin")
        // The links around TL-5's remaining events (1, 2 and 8) still hold: only its versions tell.
        let remaining = try EventStore().read(stream: "order-TL-5", on: c)
        #expect(try ChainLinks().check(remaining, on: c) == .intact(events: 4, head: 8))
        let replay = CLIRun()
        #expect(replay(["replay", "--order", "TL-5"], env: env) == 1)
        #expect(replay.output.isEmpty, "\(replay.output)")
        #expect(replay.errorLines.count == 1 && replay.errorLines[0].contains("hash chain broken at position 8")
                && replay.errorLines[0].contains("skips from version 2 to 4"), "\(replay.errorLines)")
        let asOf = CLIRun()
        #expect(asOf(["replay", "--order", "TL-5", "--as-of", Timestamp.now().rfc3339], env: env) == 1)
        let queries = OrderQueries(pool: db.pool(size: 1))
        #expect(throws: ChainBreak.self) { try queries.order(try MerchantOrderNo("TL-5"), asOf: Timestamp.now()) }
        #expect(throws: ChainBreak.self) { try queries.timeline(try MerchantOrderNo("TL-5"), includeRaw: false) }
    }

    /// Orders PREFIX-1 (positions 1, 2) and PREFIX-2 (3, 4), then a status-2 query observation
    /// of PREFIX-1 at position 5 through the projection, then PREFIX-3 (6, 7): position 5 is
    /// PREFIX-1's newest event, and neither of its neighbours is PREFIX-1's.
    func observationBetweenOthers(_ prefix: String) throws {
        try TestWrites(pool: db.pool(size: 1)).registerAndPay(prefix + "-1")
        try TestWrites(pool: db.pool(size: 1)).registerAndPay(prefix + "-2")
        let event = try QueryObservation.map(provider: "acme", merchantOrderNo: MerchantOrderNo(prefix + "-1"),
                                             response: .object([("status", .number("2"))]), observedAt: nil, receivedAt: Timestamp.now())
        let pool = db.pool(size: 1)
        let committer = GroupCommitter(pool: pool, projector: OrderProjection())
        _ = try committer.append([EventMapping.newEvent(event, raw: nil, receipt: Receipt(requestID: "test", verifiedBy: "token:test"))])
        committer.shutdown()
        pool.close()
        try TestWrites(pool: db.pool(size: 1)).registerAndPay(prefix + "-3")
    }

    @Test("an event whose recorded time was moved past asOf (its hash left as it was) is still checked: asOf and replay --as-of refuse, naming it")
    func movedPastAsOfRefused() throws {
        let c = try db.connect()
        defer { c.close() }
        try observationBetweenOthers("TA")
        // Neither neighbour of position 5 is TA-1's: only its own link tells.
        try c.query("SET session_replication_role = replica")
        try c.query("UPDATE ledger.events SET recorded_at = '2100-01-01' WHERE position = 5")
        try c.query("SET session_replication_role = origin")
        let queries = OrderQueries(pool: db.pool(size: 1))
        #expect(throws: ChainBreak.self) { try queries.order(try MerchantOrderNo("TA-1"), asOf: Timestamp.now()) }
        let asOf = CLIRun()
        #expect(asOf(["replay", "--order", "TA-1", "--as-of", Timestamp.now().rfc3339], env: env) == 1)
        #expect(asOf.errorLines.count == 1 && asOf.errorLines[0].contains("position 5"), "\(asOf.errorLines)")
        #expect(try queries.order(try MerchantOrderNo("TA-3"), asOf: Timestamp.now())["status"]?.int64Value == 3,
                "an order whose events' links all hold (6 follows 5's stored hash) is still answered")
    }

    @Test("an order's newest event deleted, its neighbours other orders' events: replay, asOf and the timeline refuse, naming it from the read model's last position")
    func newestEventDeletedRefused() throws {
        let c = try db.connect()
        defer { c.close() }
        try observationBetweenOthers("TD")
        #expect(try c.query("SELECT last_position FROM ledger.orders WHERE merchant_order_no = 'TD-1'").int64(0, "last_position") == 5)
        try c.query("SET session_replication_role = replica")
        try c.query("DELETE FROM ledger.events WHERE position = 5")
        try c.query("SET session_replication_role = origin")
        // TD-1's remaining events (1, 2) and their links hold, and no version is skipped.
        let remaining = try EventStore().read(stream: "order-TD-1", on: c)
        #expect(try ChainLinks().check(remaining, on: c) == .intact(events: 3, head: 7))
        let replay = CLIRun()
        #expect(replay(["replay", "--order", "TD-1"], env: env) == 1)
        #expect(replay.errorLines.count == 1 && replay.errorLines[0].contains("event 5 is missing")
                && replay.errorLines[0].contains("the read model names event 5 as order TD-1's last"), "\(replay.errorLines)")
        let queries = OrderQueries(pool: db.pool(size: 1))
        #expect(throws: ChainBreak.self) { try queries.order(try MerchantOrderNo("TD-1"), asOf: Timestamp.now()) }
        #expect(throws: ChainBreak.self) { try queries.timeline(try MerchantOrderNo("TD-1"), includeRaw: false) }
        // A read model edited by hand to name another order's event is no break in the chain.
        try c.query("UPDATE ledger.orders SET last_position = 4 WHERE merchant_order_no = 'TD-1'")
        #expect(try queries.timeline(try MerchantOrderNo("TD-1"), includeRaw: false)["events"]?.arrayValue?.count == 2)
    }

    @Test("an events export and a replay over a run of deleted events name the run from its first position, as verify does")
    func exportNamesFirstOfMissingRun() throws {
        for n in 0..<4 { try TestWrites(pool: db.pool(size: 1)).registerAndPay("TR-\(n)") }   // positions 1-8
        let c = try db.connect()
        defer { c.close() }
        try c.query("SET session_replication_role = replica")
        try c.query("DELETE FROM ledger.events WHERE position BETWEEN 4 AND 6")
        try c.query("SET session_replication_role = origin")
        let export = CLIRun()
        #expect(export(["export", "events", "--from", "2000-01-01", "--to", "2100-01-01"], env: env) == 1)
        #expect(export.errorLines.last?.contains("position 4") == true && export.errorLines.last?.contains("events 4 to 6 are missing") == true,
                "\(export.errorLines)")
        // Replay of an order right after the run (TR-3: positions 7, 8) names it the same way.
        let replay = CLIRun()
        #expect(replay(["replay", "--order", "TR-3"], env: env) == 1)
        let line: String = replay.errorLines.first ?? ""
        #expect(replay.errorLines.count == 1 && line.contains("position 4") && line.contains("events 4 to 6 are missing"), "\(line)")
        let verify = CLIRun()
        #expect(verify(["verify"], env: env) == 1)
        #expect(verify.output.joined(separator: "\n").contains("position 4") || verify.errorLines.joined().contains("position 4"),
                "\(verify.output) \(verify.errorLines)")
    }

    @Test("replay and the events export refuse a tampered order plainly: one line on stderr naming the position, exit 1, no file")
    func replayAndExportRefuse() throws {
        try TestWrites(pool: db.pool(size: 1)).registerAndPay("TL-3")   // positions 1, 2
        try TestWrites(pool: db.pool(size: 1)).registerAndPay("TL-4")   // positions 3, 4
        let clean = CLIRun()
        #expect(clean(["replay", "--order", "TL-3"], env: env) == 0, "\(clean.errorLines)")
        try Self.tamper(try db.connect(), position: 2, path: "{status}", value: "5")

        let replay = CLIRun()
        #expect(replay(["replay", "--order", "TL-3"], env: env) == 1)
        #expect(replay.output.isEmpty, "nothing of the order is shown: \(replay.output)")
        #expect(replay.errorLines.count == 1 && replay.errorLines[0].contains("hash chain broken at position 2"), "\(replay.errorLines)")
        let asOf = CLIRun()
        #expect(asOf(["replay", "--order", "TL-3", "--as-of", Timestamp.now().rfc3339, "--json"], env: env) == 1)
        #expect(asOf.errorLines.first?.contains("position 2") == true, "\(asOf.errorLines)")
        // The check is local (docs/decisions.md): TL-4's events and their neighbours are intact.
        let other = CLIRun()
        #expect(other(["replay", "--order", "TL-4"], env: env) == 0, "\(other.errorLines)")

        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("tamper-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let out = folder.appendingPathComponent("events.csv").path
        let day = 86_400_000_000 as Int64
        let from = Timestamp(microseconds: Timestamp.now().microseconds - day).rfc3339
        let to = Timestamp(microseconds: Timestamp.now().microseconds + day).rfc3339
        let export = CLIRun()
        #expect(export(["export", "events", "--from", from, "--to", to, "--out", out], env: env) == 1)
        #expect(export.errorLines.last?.contains("hash chain broken at position 2") == true, "\(export.errorLines)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path).isEmpty, "no file, whole or partial")
    }

    @Test("an event rewritten with its own hash recomputed is caught by the next link: replay names the position after it")
    func rehashedEventIsCaughtByItsSuccessor() throws {
        try TestWrites(pool: db.pool(size: 1)).registerAndPay("TL-5")   // positions 1, 2
        try TestWrites(pool: db.pool(size: 1)).registerAndPay("TL-6")   // positions 3, 4
        try Self.tamper(try db.connect(), position: 2, path: "{status}", value: "5", rehash: true)
        let replay = CLIRun()
        #expect(replay(["replay", "--order", "TL-5"], env: env) == 1)
        #expect(replay.errorLines.first?.contains("position 3") == true, "\(replay.errorLines)")
        let verify = CLIRun()
        #expect(verify(["verify"], env: env) == 1)
        #expect(verify.errorLines.first?.contains("position 3") == true, "\(verify.errorLines)")
    }

    @Test("a read model edited by hand: verify names each order and every field that differs, with a count per field and examples")
    func handEditedReadModel() throws {
        try TestWrites(pool: db.pool(size: 1)).registerAndPay("HE-1")
        try TestWrites(pool: db.pool(size: 1)).registerAndPay("HE-2")
        try TestWrites(pool: db.pool(size: 1)).registerAndPay("HE-3")
        let c = try db.connect()
        try c.query("UPDATE ledger.orders SET paid_amount = '99.00', tx_hash = '0xforged' WHERE merchant_order_no IN ('HE-1', 'HE-2')")
        try c.query("UPDATE ledger.orders SET event_count = 7 WHERE merchant_order_no = 'HE-2'")
        // The state itself: drop the payment, as a reducer that no longer counted it would.
        try c.query("UPDATE ledger.orders SET state = jsonb_set(state::jsonb, '{observations}', '[]')::text WHERE merchant_order_no = 'HE-3'")
        let run = CLIRun()
        #expect(run(["verify"], env: env) == 1)
        let differences = run.output.filter { $0.hasPrefix("difference: ") }
        #expect(differences.count == 3, "\(run.output)")
        #expect(differences.contains("difference: order HE-1: paid_amount, tx_hash differ from a replay of its events"), "\(differences)")
        #expect(differences.contains("difference: order HE-2: paid_amount, tx_hash, event_count differ from a replay of its events"), "\(differences)")
        let he3 = try #require(differences.first { $0.contains("order HE-3") })
        for field in ["state.status", "state.paid", "state.paidAmount", "state.observations"] {
            #expect(he3.contains(field), "\(field) in \(he3)")
        }
        #expect(he3.contains("(state.status 1 stored, 3 replayed)"), "\(he3)")
        #expect(run.output.contains("  paid_amount: 2 (order HE-1, order HE-2)"), "\(run.output)")
        #expect(run.output.contains("  event_count: 1 (order HE-2)"), "\(run.output)")
        #expect(run.output.contains("  state.status: 1 (order HE-3)"), "\(run.output)")
        #expect(run.output.contains("summary: 3 difference(s): 3 order(s), 0 enrollment(s), 0 event(s)"), "\(run.output)")
        #expect(run.output.last?.hasPrefix("checked: ") == true, "verify ends with its summary: \(run.output)")
        #expect(run.errorLines.last?.contains("3 difference(s); first: order HE-1: paid_amount, tx_hash differ") == true, "\(run.errorLines)")
        #expect(run(["rebuild"], env: env) == 0)
        #expect(run(["verify"], env: env) == 0, "\(run.errorLines)")
    }

    @Test("the summary counts each field over many orders and names only a few of them")
    func summaryExamplesAreFew() throws {
        try TestWrites(pool: db.pool(size: 1)).registrations(12)
        try db.connect().query("UPDATE ledger.orders SET expected_amount = '2.00'")
        let run = CLIRun()
        #expect(run(["verify"], env: env) == 1)
        #expect(run.output.filter { $0.hasPrefix("difference: ") }.count == 12)
        #expect(run.output.contains("  expected_amount: 12 (order P-00000, order P-00001, order P-00002, …)"), "\(run.output)")
    }
}

/// The HTTP reads that fold events (`asOf`, the timeline, an events export) answer a problem, not a state.
@Suite("A tampered log over HTTP")
struct TamperedLogHTTPTests {
    @Test("asOf, the timeline and an events export answer 500 \"Ledger integrity failure\" naming the position; the stored read model is still served")
    func asOfRefuses() throws {
        let f = try LedgerFixture.start("tamperhttp")
        defer { f.stop() }
        #expect(try f.register("TH-1").status == 201)
        let body = LedgerFixture.web3Body("TH-1", status: 3)
        #expect(try f.client.post("/v1/webhooks/web3", body: body,
                                  headers: LedgerFixture.web3Headers(body, timestamp: String(Timestamp.now().seconds))).status == 200)
        let asOf = Timestamp(microseconds: Timestamp.now().microseconds + 1_000_000).rfc3339.replacingOccurrences(of: ":", with: "%3A")
        #expect(try f.client.get("/v1/orders/TH-1?asOf=\(asOf)", token: f.auditor).status == 200)
        let c = try f.connect()
        defer { c.close() }
        let position = try c.query("SELECT max(position) AS p FROM ledger.events").int64(0, "p")
        try TamperedLogTests.tamper(c, position: position, path: "{status}", value: "5")

        for target in ["/v1/orders/TH-1?asOf=\(asOf)", "/v1/orders/TH-1/events", "/v1/exports/events?from=2020-01-01&to=2100-01-01"] {
            let reply = try f.client.get(target, token: f.auditor)
            #expect(reply.status == 500 && reply.isProblem, "\(target): \(reply)")
            #expect(reply.text.contains("Ledger integrity failure"), "\(target): \(reply.text)")
            #expect(reply.text.contains("position \(position)"), "\(target): \(reply.text)")
        }
        #expect(try f.client.get("/v1/orders/TH-1", token: f.auditor).status == 200, "the read model was projected before the edit")
    }
}
