import Foundation
import LedgerCore
@testable import LedgerPostgres
@testable import LedgerService
import LedgerTestSupport
import Testing

/// The writer reads a batch's stored states on another connection while it
/// appends (`StatePrefetch`): a state is used only when it holds exactly the
/// events before the batch's first one for its order, and the read models stay
/// a fold of their streams whatever else appends.
@Suite("Stored states read ahead")
struct StatePrefetchTests {
    /// The state of order `no` after `count` webhooks, as the writer would have stored it.
    static func state(_ no: String, events count: Int) throws -> (OrderState, Timestamp?) {
        var model: (OrderState, Timestamp?) = (OrderState(merchantOrderNo: try MerchantOrderNo(no)), nil)
        for n in 1...count {
            let event = try EventMapping.recorded(try OrderStateCacheTests.webhook(no, status: 2, seq: n), receipt(n))
            OrderProjection.fold(&model, event)
        }
        return model
    }

    static func receipt(_ version: Int) -> EventReceipt {
        EventReceipt(position: Int64(version), eventID: "00000000-0000-7000-8000-00000000000\(version % 10)",
                     streamVersion: version, recordedAt: Timestamp.now(), hash: [UInt8](repeating: 0, count: 32))
    }

    /// What `prepare` renders for one webhook of `no` at stream version 3, given the states read ahead.
    static func rendered(readAhead states: [String: (OrderState, Timestamp?)]) throws -> Bool {
        let event = try OrderStateCacheTests.webhook("PF-1", status: 3, seq: 3)
        let item: BatchProjector.Item = (PreparedEvent(event), nil, .appended(receipt(3)))
        let projection = OrderProjection(cache: nil)
        let plan = try #require(try projection.prepare([item], prefetched: StatePrefetch(ready: states)) as? OrderProjection.Plan)
        return plan.rendered["PF-1"] != nil
    }

    @Test("a state with exactly the events before the batch's is folded ahead; a stale or missing one is left to the load")
    func onlyTheStateBeforeTheBatch() throws {
        #expect(try Self.rendered(readAhead: ["PF-1": try Self.state("PF-1", events: 2)]), "the state as of version 2 serves version 3")
        #expect(try !Self.rendered(readAhead: ["PF-1": try Self.state("PF-1", events: 1)]), "a state behind (another writer appended) is not used")
        #expect(try !Self.rendered(readAhead: [:]), "nothing read: the order is loaded in the transaction")
    }

    @Test("with a second writer appending to the same orders, every read model still matches a replay of its stream")
    func secondWriter() throws {
        let db = try TestDatabase.create("prefetch")
        defer { LedgerFixture.drop(db) }
        let poolA = db.pool(size: 3), poolB = db.pool(size: 2)
        let a = GroupCommitter(pool: poolA, projector: OrderProjection(cache: nil, prefetchPool: poolA))
        let b = GroupCommitter(pool: poolB, projector: OrderProjection(cache: nil))
        defer { a.shutdown(); b.shutdown(); poolA.close(); poolB.close() }
        for n in 0..<8 { _ = try a.append([try OrderStateCacheTests.registration("PF-\(n)")]) }
        // Both writers at once, on the same orders: A reads ahead while B appends.
        let failures = Locked([String]())
        onThreads(2) { t in
            let writer = t == 0 ? a : b
            for i in 0..<60 {
                do {
                    _ = try writer.append([try OrderStateCacheTests.webhook("PF-\(i % 8)", status: [1, 2, 3][i % 3], seq: 1_000 * t + i)])
                } catch {
                    failures.with { $0.append("\(error)") }
                }
            }
        }
        #expect(failures.snapshot.isEmpty, "\(failures.snapshot.prefix(3))")
        #expect(try LedgerFixture.verify(databaseURL: db.url) == [])
        let c = try db.connect()
        defer { c.close() }
        let counts = try c.query("SELECT sum(event_count) AS n FROM ledger.orders").int64(0, "n")
        #expect(counts == 8 + 120)
    }
}
