import Foundation
import LedgerAPI
import LedgerCore
@testable import LedgerPostgres
@testable import LedgerService
import LedgerTestSupport
import Testing

/// The writer's cache of committed order states: used only for the very next
/// event of a stream, dropped with a rolled-back batch, and never wrong when
/// someone else appends to the stream.
@Suite("Order state cache")
struct OrderStateCacheTests {
    static func webhook(_ no: String, status: Int, seq: Int) throws -> NewEvent {
        let now = Timestamp.now()
        let body = Array(#"{"merchantOrderNo":"\#(no)","status":\#(status),"amount":"40.00","txHash":"0x\#(seq)","seq":\#(seq)}"#.utf8)
        let ts = String(now.seconds)
        let headers = ["x-pay-timestamp": ts, "x-pay-signature": Web3Webhook.signature(key: "k", timestamp: ts, body: body)]
        let (_, event) = try Web3Webhook.ingest(headers: headers, body: body, keys: ["k"], now: now)
        return EventMapping.newEvent(event, raw: body, receipt: Receipt(requestID: "test-\(seq)", verifiedBy: "signature"))
    }

    static func registration(_ no: String) throws -> NewEvent {
        let registration = try OrderRequests.registration(
            body: Array(#"{"merchantOrderNo":"\#(no)","provider":"web3","amount":"40.00","asset":"USDT"}"#.utf8),
            receivedAt: Timestamp.now())
        return EventMapping.newEvent(.registered(registration), raw: nil, receipt: Receipt(requestID: "reg", verifiedBy: "token:t"))
    }

    @Test("an entry serves only the next stream version; a rollback keeps nothing; the size is bounded")
    func entries() {
        let cache = OrderStateCache(capacity: 4)
        cache.observe(orders: 1, new: 0)   // batches of existing orders: states are kept
        cache.remember("Z", (OrderState(merchantOrderNo: try! MerchantOrderNo("Z")), nil), streamVersion: 1)
        cache.commit()
        #expect(cache.count == 0, "nothing is kept before the cache knows which table its states are of")
        cache.fold(against: 1)
        let model: (OrderState, Timestamp?) = (OrderState(merchantOrderNo: try! MerchantOrderNo("A")), nil)
        cache.remember("A", model, streamVersion: 3)
        #expect(cache.model(of: "A", before: 4) == nil, "not committed yet")
        cache.commit()
        #expect(cache.model(of: "A", before: 4) != nil)
        #expect(cache.model(of: "A", before: 5) == nil, "a version in between was appended elsewhere")
        #expect(cache.model(of: "A", before: 3) == nil)
        cache.commit()   // the attempt that folded from A committed
        cache.remember("A", model, streamVersion: 4)
        cache.rollBack()
        #expect(cache.model(of: "A", before: 4) != nil && cache.model(of: "A", before: 5) == nil)
        for n in 0..<10 { cache.remember("O\(n)", model, streamVersion: 1) }
        cache.commit()
        #expect(cache.count <= 4)
    }

    @Test("a second writer appends to a cached order: the next batch loads the stored state, and the read model matches a replay")
    func secondWriter() throws {
        let db = try TestDatabase.create("statecache")
        defer { LedgerFixture.drop(db) }
        let cache = OrderStateCache()
        let poolA = db.pool(size: 2), poolB = db.pool(size: 2)
        let a = GroupCommitter(pool: poolA, projector: OrderProjection(cache: cache))
        let b = GroupCommitter(pool: poolB, projector: OrderProjection(cache: nil))
        defer { a.shutdown(); b.shutdown(); poolA.close(); poolB.close() }

        _ = try a.append([try Self.registration("SC-1")])
        _ = try a.append([try Self.webhook("SC-1", status: 2, seq: 1)])
        #expect(cache.model(of: "SC-1", before: 3) != nil, "A keeps what it committed")
        _ = try b.append([try Self.webhook("SC-1", status: 3, seq: 2)])        // version 3, behind A's back
        _ = try a.append([try Self.webhook("SC-1", status: 4, seq: 3)])        // version 4: A must load
        #expect(cache.model(of: "SC-1", before: 5) != nil)
        _ = try a.append([try Self.webhook("SC-1", status: 4, seq: 4),         // two in one batch, from the cache
                          try Self.webhook("SC-1", status: 4, seq: 5)])

        let c = try db.connect()
        defer { c.close() }
        let (state, _) = try #require(try OrderReadModel().load(try MerchantOrderNo("SC-1"), on: c))
        #expect(state.eventCount == 6)
        #expect(state.paid)
        #expect(try LedgerFixture.verify(databaseURL: db.url) == [])
    }

    @Test("a batch that rolls back leaves the cache as it was, and the next batch is still right")
    func rollback() throws {
        let db = try TestDatabase.create("statecacheroll")
        defer { LedgerFixture.drop(db) }
        let cache = OrderStateCache()
        let pool = db.pool(size: 2)
        let committer = GroupCommitter(pool: pool, projector: OrderProjection(cache: cache))
        defer { committer.shutdown(); pool.close() }
        _ = try committer.append([try Self.registration("SR-1")])
        _ = try committer.append([try Self.webhook("SR-1", status: 1, seq: 8)])   // an existing order: kept
        // The same registration key with other content is a key conflict, not a failure; a
        // failed transaction comes from an event the database refuses (a NUL in jsonb text).
        var bad = try Self.webhook("SR-1", status: 2, seq: 9)
        bad.payloadJSON = #"{"merchantOrderNo":"SR-1","note":"\u0000"}"#
        #expect(throws: (any Error).self) { _ = try committer.append([bad]) }
        #expect(cache.count > 0, "the committed state is still known")
        #expect(!cache.bypassed, "PostgreSQL refused the event before anything was folded from the cache")
        _ = try committer.append([try Self.webhook("SR-1", status: 3, seq: 10)])
        #expect(!cache.bypassed && cache.model(of: "SR-1", before: 4) != nil)
        #expect(try LedgerFixture.verify(databaseURL: db.url) == [])
    }

    @Test("an attempt that folded from an entry and rolled back: the next attempt folds from none, and the entries stay for the one after")
    func bypassAfterRollback() throws {
        let cache = OrderStateCache()
        cache.fold(against: 1)
        cache.observe(orders: 1, new: 0)
        cache.remember("B", (OrderState(merchantOrderNo: try MerchantOrderNo("B")), nil), streamVersion: 2)
        cache.commit()
        #expect(cache.model(of: "B", before: 3) != nil)
        cache.rollBack()
        #expect(cache.bypassed && cache.model(of: "B", before: 3) == nil && cache.count == 1)
        cache.rollBack()   // the retry, folded from none, rolled back too
        #expect(!cache.bypassed && cache.model(of: "B", before: 3) != nil)
        cache.rollBack()
        #expect(cache.bypassed)
        cache.commit()
        #expect(!cache.bypassed && cache.model(of: "B", before: 3) != nil)
    }

    @Test("states of one table: another table forgets them all")
    func tables() throws {
        let cache = OrderStateCache()
        cache.fold(against: 7)
        cache.observe(orders: 1, new: 0)
        cache.remember("T", (OrderState(merchantOrderNo: try MerchantOrderNo("T")), nil), streamVersion: 2)
        cache.commit()
        cache.fold(against: 7)
        #expect(cache.model(of: "T", before: 3) != nil && cache.table == 7)
        cache.fold(against: 8)
        #expect(cache.model(of: "T", before: 3) == nil && cache.count == 0 && cache.table == 8)
    }

    @Test("a rebuild swaps ledger.orders under a writer that remembers the state it folded from a row edited by hand: its next batch fails the table check, forgets, and folds the new row; verify is clean")
    func rebuildSwap() throws {
        let db = try TestDatabase.create("statecacheswap")
        defer { LedgerFixture.drop(db) }
        let no = "SW-1"
        let plainPool = db.pool(size: 1)
        let plain = GroupCommitter(pool: plainPool, projector: OrderProjection(cache: nil))
        _ = try plain.append([try Self.registration(no)])
        plain.shutdown()
        plainPool.close()
        let c = try db.connect()
        defer { c.close() }
        // The row edited by hand: its state's registered amount is no longer the event's.
        try c.query(#"UPDATE ledger.orders SET state = replace(state, '"amount":"40.00"', '"amount":"41.00"') WHERE merchant_order_no = $1"#,
                    [.text(no)])
        #expect(try LedgerFixture.verify(databaseURL: db.url).contains { $0.contains(no) }, "verify names the edited row")

        let cache = OrderStateCache()
        let pool = db.pool(size: 2)
        let writer = GroupCommitter(pool: pool, projector: OrderProjection(cache: cache))
        defer { writer.shutdown(); pool.close() }
        _ = try writer.append([try Self.webhook(no, status: 1, seq: 1)])   // loads the edited row
        let remembered = try #require(cache.model(of: no, before: 3), "the writer keeps the state it folded")
        #expect(remembered.0.expectedAmount == "41.00")

        let outcome = try OnlineRebuildTests.rebuild(db.url)
        #expect(outcome.events == 2)
        #expect(try LedgerFixture.verify(databaseURL: db.url) == [], "the rebuild folded the row from the events")
        let retriedBefore = writer.stats.retriedBatches
        _ = try writer.append([try Self.webhook(no, status: 2, seq: 2)])
        #expect(writer.stats.retriedBatches == retriedBefore + 1, "the batch failed the table check once and was written again")
        #expect(try LedgerFixture.verify(databaseURL: db.url) == [], "folded into the new row, not into the remembered state")
        let (state, _) = try #require(try OrderReadModel().load(try MerchantOrderNo(no), on: c))
        #expect(state.expectedAmount == "40.00" && state.status == .confirming && state.eventCount == 3)
        #expect(cache.model(of: no, before: 4)?.0.expectedAmount == "40.00", "remembered again, of the new table")
    }

    @Test("the entries' estimated memory is bounded: large states rotate the generations sooner")
    func memoryBound() throws {
        let cache = OrderStateCache(capacity: 10_000, maxBytes: 1 << 20)
        cache.fold(against: 1)
        cache.observe(orders: 1, new: 0)
        let model: (OrderState, Timestamp?) = (OrderState(merchantOrderNo: try MerchantOrderNo("M")), nil)
        for n in 0..<2_000 {
            cache.remember("M\(n)", model, streamVersion: 2, storedBytes: 4_000)
            cache.commit()
        }
        let perEntry = OrderStateCache.weight(storedBytes: 4_000)
        #expect(cache.newerBytes <= (1 << 20) / 2, "the newer generation holds \(cache.newerBytes) bytes")
        #expect(cache.count * perEntry <= 1 << 20, "\(cache.count) entries of \(perEntry) bytes")
        #expect(cache.model(of: "M1999", before: 3) != nil, "the newest entry is kept")
    }

    @Test("states are kept only while batches touch existing orders: not for a flood of new orders, again once orders are revisited")
    func keepsOnlyWhatIsReused() throws {
        let cache = OrderStateCache(capacity: 64)
        cache.fold(against: 1)
        let model: (OrderState, Timestamp?) = (OrderState(merchantOrderNo: try MerchantOrderNo("N")), nil)
        for n in 0..<200 {   // webhooks that create their orders: nothing kept would be read
            cache.observe(orders: 100, new: 100)
            cache.remember("N\(n)", model, streamVersion: 1)
            cache.commit()
        }
        #expect(!cache.isKeeping && cache.count == 0, "kept \(cache.count) states nobody reads")
        cache.observe(orders: 100, new: 10)   // registered orders get their webhooks
        #expect(cache.isKeeping)
        cache.remember("E1", model, streamVersion: 2)
        cache.commit()
        #expect(cache.model(of: "E1", before: 3) != nil)
        for _ in 0..<100 { cache.observe(orders: 100, new: 100) }
        #expect(!cache.isKeeping, "back to new orders only: keeping stops (share \(cache.existingShare))")
        cache.observe(orders: 100, new: 99)
        #expect(!cache.isKeeping, "one existing order in a batch of new ones (share \(cache.existingShare)) is not a reason to keep")
    }

    @Test("LEDGER_ORDER_STATE_CACHE: off by default, a size turns it on, a bad value is named")
    func configuration() throws {
        let base = ["DATABASE_URL": "postgresql://localhost/x"]
        #expect(try LedgerConfiguration.fromEnvironment(base).service.orderStateCacheSize == 0)
        #expect(try LedgerConfiguration.fromEnvironment(base.merging(["LEDGER_ORDER_STATE_CACHE": "8192"]) { $1 })
            .service.orderStateCacheSize == 8192)
        #expect(try LedgerConfiguration.fromEnvironment(base.merging(["LEDGER_ORDER_STATE_CACHE": "4096"]) { $1 })
            .service.orderStateCacheSize == 4096)
        #expect(throws: ConfigurationError.self) {
            try LedgerConfiguration.fromEnvironment(base.merging(["LEDGER_ORDER_STATE_CACHE": "-1"]) { $1 })
        }
    }
}
