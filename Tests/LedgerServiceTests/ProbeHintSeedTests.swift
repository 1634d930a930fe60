import Foundation
import LedgerCore
@testable import LedgerPostgres
@testable import LedgerService
import LedgerTestSupport
import Synchronization
import Testing

/// A restarted service's writer knows nothing of the orders and keys already stored:
/// without a seed, an old order's next event or an old event's redelivery is taken for
/// new, caught by a unique constraint, and costs a rolled-back batch and a cooldown.
/// With `seedHints`, the writer probes everything until the seed is read, then knows.
@Suite("Probe hints after a restart")
struct ProbeHintSeedTests {
    /// Three orders with one webhook each, appended by a committer that then stops
    /// (the service before its restart). Answers the events, to send again.
    static func ledgerBeforeRestart(_ db: TestDatabase) throws -> [NewEvent] {
        let pool = db.pool(size: 2)
        defer { pool.close() }
        let committer = GroupCommitter(pool: pool, projector: OrderProjection(cache: nil))
        defer { committer.shutdown() }
        var events: [NewEvent] = []
        for (seq, no) in ["SEED-1", "SEED-2", "SEED-3"].enumerated() {
            let event = try OrderStateCacheTests.webhook(no, status: 2, seq: seq + 1)
            _ = try committer.append([event])
            events.append(event)
        }
        return events
    }

    static func waitUntilSeeded(_ committer: GroupCommitter) -> Bool {
        for _ in 0..<500 where !committer.stats.hintsSeeded { Thread.sleep(forTimeInterval: 0.01) }
        return committer.stats.hintsSeeded
    }

    @Test("seeded, the restarted writer takes no old order or redelivered event for new, then skips probes again")
    func seededWriterDoesNotMiss() throws {
        let db = try TestDatabase.create("hintseed")
        defer { LedgerFixture.drop(db) }
        let before = try Self.ledgerBeforeRestart(db)
        let pool = db.pool(size: 2)
        let committer = GroupCommitter(pool: pool, projector: OrderProjection(cache: nil), seedHints: ProbeHintSeed())
        defer { committer.shutdown(); pool.close() }
        #expect(Self.waitUntilSeeded(committer), "the seed was not read within 5 s")

        let next = try committer.append([try OrderStateCacheTests.webhook("SEED-1", status: 3, seq: 10)])
        #expect(next.first?.receipt?.streamVersion == 2, "\(next)")
        let redelivered = try committer.append([before[1]])
        guard case .duplicate(let receipt, _)? = redelivered.first else {
            Issue.record("the redelivery of an event stored before the restart was not a duplicate: \(redelivered)")
            return
        }
        #expect(receipt.position == 2)
        #expect(committer.stats.probeHintMisses == 0, "\(committer.stats)")

        // Not stuck probing: a new order's webhook now skips the round trip.
        _ = try committer.append([try OrderStateCacheTests.webhook("SEED-NEW", status: 2, seq: 11)])
        #expect(committer.stats.roundTripsSkipped >= 1, "\(committer.stats)")
        #expect(try LedgerFixture.verify(databaseURL: db.url) == [])
    }

    @Test("unseeded, the same restart costs a miss on the old order's next event (what the seed saves)")
    func unseededWriterMisses() throws {
        let db = try TestDatabase.create("hintunseeded")
        defer { LedgerFixture.drop(db) }
        _ = try Self.ledgerBeforeRestart(db)
        let pool = db.pool(size: 2)
        let committer = GroupCommitter(pool: pool, projector: OrderProjection(cache: nil))
        defer { committer.shutdown(); pool.close() }
        #expect(!committer.stats.hintsSeeded)

        let next = try committer.append([try OrderStateCacheTests.webhook("SEED-1", status: 3, seq: 10)])
        #expect(next.first?.receipt?.streamVersion == 2, "\(next)")
        #expect(committer.stats.probeHintMisses == 1, "\(committer.stats)")
    }

    @Test("the seed reads the newest orders' streams, enrollments' streams and the newest keys, in pages, within its limits")
    func seedReadsWithinLimits() throws {
        let db = try TestDatabase.create("hintseedread")
        defer { LedgerFixture.drop(db) }
        let before = try Self.ledgerBeforeRestart(db)
        let c = try db.connect()
        defer { c.close() }
        try c.query("""
            INSERT INTO ledger.enrollments (enrollment_ref, phase, updated_at, last_position, state)
            VALUES ('E-1', 'started', now(), 0, '{}'), ('E-2', 'started', now(), 0, '{}'), ('E-3', 'started', now(), 0, '{}')
            """)
        // SEED-3 was updated last; a page of one row walks back through the rest.
        let everything = try ProbeHintSeed(pageSize: 1).read(on: c)
        #expect(everything.streams == ["order-SEED-3", "order-SEED-2", "order-SEED-1",
                                       "enrollment-E-1", "enrollment-E-2", "enrollment-E-3"])
        #expect(everything.keys == before.map(\.idempotencyKey))

        let limited = try ProbeHintSeed(streamLimit: 2, keyLimit: 2, pageSize: 1).read(on: c)
        #expect(limited.streams == ["order-SEED-3", "order-SEED-2", "enrollment-E-1", "enrollment-E-2"])
        #expect(limited.keys == before.suffix(2).map(\.idempotencyKey))

        let none = try ProbeHintSeed(streamLimit: 0, keyLimit: 0).read(on: c)
        #expect(none.streams.isEmpty && none.keys.isEmpty)
    }

    @Test("orders updated at the very same instant are each read once across pages")
    func pagesWithTiedTimes() throws {
        let db = try TestDatabase.create("hintseedties")
        defer { LedgerFixture.drop(db) }
        let c = try db.connect()
        defer { c.close() }
        for no in ["T-1", "T-2", "T-3", "T-4", "T-5"] { try NewOrderRowTests.writeOrphanRow(no, on: c) }
        try c.query("UPDATE ledger.orders SET updated_at = '2026-11-30 05:00:00.123456+00'")
        let read = try ProbeHintSeed(pageSize: 2).read(on: c)
        #expect(read.streams == ["order-T-5", "order-T-4", "order-T-3", "order-T-2", "order-T-1"])
    }

    @Test("with the database down the seed fails, is reported and retried, the writer stays unseeded, and shutdown is not held up")
    func seedWhileDatabaseDown() throws {
        // A pool whose server does not answer: port 1 on loopback refuses connections.
        var configuration = DatabaseConfiguration(connectionString: "postgresql://postgres@127.0.0.1:1/none?connect_timeout=1")
        configuration.poolSize = 2
        configuration.acquireTimeoutSeconds = 1
        let dead = ConnectionPool(configuration: configuration)
        defer { dead.close() }
        let errors = Mutex(0)
        let committer = GroupCommitter(pool: dead, seedHints: ProbeHintSeed(),
                                       onHintSeedError: { _ in errors.withLock { $0 += 1 } })
        Thread.sleep(forTimeInterval: 1.5)
        #expect(!committer.stats.hintsSeeded)
        #expect(errors.withLock { $0 } >= 1, "the first failure is reported")
        let started = Date()
        committer.shutdown()
        #expect(Date().timeIntervalSince(started) < 5, "shutdown waited for the seeder")
    }

    @Test("absorbed filters keep what the writer already held and add what the seed brings")
    func absorbKeepsBoth() {
        let hints = ProbeHints(keysPerGeneration: 1000, streamBits: 1 << 14, awaitingSeed: true)
        #expect(!hints.beginBatch(), "no optimistic batch before the seed")
        hints.remember(key: "sent-key", stream: "order-SENT")
        #expect(!hints.beginBatch())
        hints.absorb(keys: ["old-key"], streams: ["order-OLD"])
        #expect(hints.beginBatch(), "the seed merged, batches may be optimistic again")
        #expect(hints.mayExist(key: "sent-key") && hints.mayExist(key: "old-key"))
        #expect(hints.mayExist(stream: "order-SENT") && hints.mayExist(stream: "order-OLD"))

        // Seeds handed over together are all merged; one after the merge still counts.
        hints.absorb(keys: ["late-1"], streams: [])
        hints.absorb(keys: ["late-2"], streams: ["order-LATE"])
        #expect(hints.beginBatch())
        #expect(hints.mayExist(key: "late-1") && hints.mayExist(key: "late-2") && hints.mayExist(stream: "order-LATE"))
    }
}
