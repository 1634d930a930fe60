import Foundation
import LedgerCore
@testable import LedgerPostgres
@testable import LedgerService
import LedgerTestSupport
import Testing

/// Rows of orders a batch starts are saved with a plain INSERT (no conflict
/// check). A row that exists anyway, written by hand with no events behind it,
/// must not cost an acknowledged webhook: the batch rolls back, is tried once
/// more with upserts, and the read model ends up matching a replay.
@Suite("New order rows")
struct NewOrderRowTests {
    /// An `ledger.orders` row for `no` with no events in its stream (as an operator's
    /// hand-made repair could leave behind).
    static func writeOrphanRow(_ no: String, on c: PostgresConnection) throws {
        try c.query("""
            INSERT INTO ledger.orders (merchant_order_no, status, status_name, paid, attention, late_payment,
                                       refunded, updated_at, event_count, last_position, state)
            VALUES ($1, 5, 'expired', false, false, false, false, now(), 0, 0, '{}')
            """, [.text(no)])
    }

    static func recorded(_ no: String, status: Int, position: Int64) throws -> RecordedEvent {
        let now = Timestamp.now()
        let body = LedgerFixture.web3Body(no, status: status)
        let ts = String(now.seconds)
        let headers = ["x-pay-timestamp": ts, "x-pay-signature": Web3Webhook.signature(key: "k", timestamp: ts, body: body)]
        let (_, event) = try Web3Webhook.ingest(headers: headers, body: body, keys: ["k"], now: now)
        return RecordedEvent(event: event, position: position, recordedAt: now)
    }

    @Test("the plain INSERT for a started order refuses a row that exists; the upsert replaces it")
    func plainInsertRefusesAnExistingRow() throws {
        let db = try TestDatabase.create("neworderrow")
        defer { LedgerFixture.drop(db) }
        let c = try db.connect()
        defer { c.close() }
        try Self.writeOrphanRow("NR-1", on: c)
        let no = try MerchantOrderNo("NR-1")
        let batch = [(no, [try Self.recorded("NR-1", status: 2, position: 1)])]
        let projection = OrderProjection(cache: nil)

        let refusal = #expect(throws: PostgresError.self) {
            try projection.apply(batch, new: ["NR-1"], insertNew: true, on: c)
        }
        #expect(refusal?.sqlState == "23505", "a unique violation on the order's key, not another error")

        try projection.apply(batch, new: ["NR-1"], insertNew: false, on: c)
        let (state, _) = try #require(try OrderReadModel().load(no, on: c))
        #expect(state.status.rawValue == 2 && state.eventCount == 1)
    }

    @Test("a webhook for an order with a hand-written row is acknowledged once, and the row matches a replay")
    func orphanRowRecovers() throws {
        let db = try TestDatabase.create("neworderorphan")
        defer { LedgerFixture.drop(db) }
        let c = try db.connect()
        defer { c.close() }
        try Self.writeOrphanRow("NR-2", on: c)
        let pool = db.pool(size: 2)
        let projection = OrderProjection(cache: nil)
        let committer = GroupCommitter(pool: pool, projector: projection)
        defer { committer.shutdown(); pool.close() }

        let outcomes = try committer.append([try OrderStateCacheTests.webhook("NR-2", status: 3, seq: 1)])
        guard case .appended = outcomes.first else {
            Issue.record("expected the webhook appended, got \(outcomes)")
            return
        }
        #expect(committer.stats.retriedBatches == 1, "the COPY was refused once and the batch tried again")
        #expect(!projection.newRows.upsertsEverything, "a commit switches back to COPY")
        _ = try committer.append([try OrderStateCacheTests.webhook("NR-3", status: 2, seq: 2)])

        let (state, _) = try #require(try OrderReadModel().load(try MerchantOrderNo("NR-2"), on: c))
        #expect(state.eventCount == 1 && state.paid)
        #expect(try OrderReadModel().load(try MerchantOrderNo("NR-3"), on: c)?.0.eventCount == 1)
        let stored = try c.query("SELECT count(*) AS n FROM ledger.events")
        #expect(try stored.int64(0, "n") == 2, "each webhook stored exactly once")
        #expect(try LedgerFixture.verify(databaseURL: db.url) == [])
    }

    @Test("a batch that fails for any other reason is not tried again in full")
    func otherFailuresAreNotRetried() throws {
        let db = try TestDatabase.create("neworderother")
        defer { LedgerFixture.drop(db) }
        let pool = db.pool(size: 2)
        let projection = OrderProjection(cache: nil)
        let committer = GroupCommitter(pool: pool, projector: projection)
        defer { committer.shutdown(); pool.close() }
        var bad = try OrderStateCacheTests.webhook("NR-X", status: 2, seq: 1)
        bad.payloadJSON = #"{"merchantOrderNo":"NR-X","note":"\u0000"}"#   // jsonb refuses NUL
        #expect(throws: (any Error).self) { _ = try committer.append([bad]) }
        #expect(committer.stats.retriedBatches == 0)
        #expect(!projection.newRows.upsertsEverything)
        _ = try committer.append([try OrderStateCacheTests.webhook("NR-Y", status: 2, seq: 2)])
        #expect(try LedgerFixture.verify(databaseURL: db.url) == [])
    }

    @Test("a row stored by COPY equals, column by column, the same row stored by the upsert")
    func copyMatchesUpsert() throws {
        let db = try TestDatabase.create("neworderrowcopy")
        defer { LedgerFixture.drop(db) }
        let c = try db.connect()
        defer { c.close() }
        let no = try MerchantOrderNo("NR-C")
        let registration = try OrderRequests.registration(body: Array(#"""
            {"merchantOrderNo":"NR-C","provider":"web3","amount":"40.00","asset":"USDT","fiatAmount":"39.90",
             "fiatCurrency":"EUR","externalCustomerId":"ana@example.com"}
            """#.utf8), receivedAt: Timestamp.now())
        var model: (OrderState, Timestamp?) = (OrderState(merchantOrderNo: no), nil)
        OrderProjection.fold(&model, RecordedEvent(event: .registered(registration), position: 1, recordedAt: Timestamp.now()))
        OrderProjection.fold(&model, try Self.recorded("NR-C", status: 3, position: 2))
        let row = OrderRow(model)
        #expect(row.state.paid && row.paidRecordedAt != nil && row.documents.masked != nil,
                "a row with every kind of column filled, masked document included")

        var plain: (OrderState, Timestamp?) = (OrderState(merchantOrderNo: try MerchantOrderNo("NR-D")), nil)
        OrderProjection.fold(&plain, try Self.recorded("NR-D", status: 2, position: 3))
        let plainRow = OrderRow(plain)
        #expect(plainRow.documents.masked == nil && plainRow.paidRecordedAt == nil, "and one with the NULLs")

        let everyColumn = """
            SELECT string_agg(to_jsonb(o)::text, E'\n' ORDER BY merchant_order_no) AS rows
              FROM ledger.orders o WHERE merchant_order_no IN ('NR-C', 'NR-D')
            """
        try OrderReadModel().insertNew([row, plainRow], on: c)
        let copied = try c.query(everyColumn).string(0, "rows")
        try c.query("DELETE FROM ledger.orders WHERE merchant_order_no IN ('NR-C', 'NR-D')")
        try OrderReadModel().saveMany([row, plainRow], on: c)
        let upserted = try c.query(everyColumn).string(0, "rows")
        #expect(copied.split(separator: "\n").count == 2)
        #expect(copied == upserted)
    }

    @Test("paced, new rows go as a COPY of their own a piece of about 32 KB, and are the rows one COPY stores")
    func pacedPieces() throws {
        let db = try TestDatabase.create("neworderrowpaced")
        defer { LedgerFixture.drop(db) }
        let c = try db.connect()
        defer { c.close() }
        let rows = try (0..<100).map { n in
            var model: (OrderState, Timestamp?) = (OrderState(merchantOrderNo: try MerchantOrderNo("NP-\(n)")), nil)
            OrderProjection.fold(&model, try Self.recorded("NP-\(n)", status: 3, position: Int64(n + 1)))
            return OrderRow(model)
        }
        let everyColumn = "SELECT string_agg(to_jsonb(o)::text, E'\\n' ORDER BY merchant_order_no) AS rows FROM ledger.orders o"
        try OrderReadModel().insertNew(rows, on: c)
        let once = try c.query(everyColumn).string(0, "rows")
        try c.query("DELETE FROM ledger.orders")

        // A burst of a microsecond: the thread pauses at each step, and it steps once a COPY.
        let duty = DutyCycle(share: 0.99, burst: .microseconds(1))
        try OrderReadModel().insertNew(rows, duty: duty, on: c)
        #expect(try c.query(everyColumn).string(0, "rows") == once)
        var pieces = 0, size = 0
        for row in rows {
            size += OrderReadModel.copySizeEstimate(row)
            if size >= OrderReadModel.pacedPieceBytes { pieces += 1; size = 0 }
        }
        if size > 0 { pieces += 1 }
        #expect(pieces >= 4, "the rows fill several pieces")
        #expect(duty.pauses == pieces, "one pause a piece")

        // Each piece is stored before the next is made: outside a transaction, a row that
        // cannot be stored, in the last piece, leaves the pieces before it stored.
        try c.query("DELETE FROM ledger.orders")
        #expect(throws: (any Error).self) {
            try OrderReadModel().insertNew(rows + [rows[0]], duty: DutyCycle(share: 0.99), on: c)
        }
        let stored = try c.query("SELECT count(*) AS n FROM ledger.orders").int64(0, "n")
        #expect(stored > 0 && stored < 100, "\(stored) rows stored before the piece that failed")
    }
}
