import Foundation
import LedgerCore
@testable import LedgerPostgres
import LedgerTestSupport
import Synchronization
import Testing

/// A batch with nothing to probe skips ledger.append_prepare (ChainAppend, "the
/// round trip skipped"): its events chain to the head the writer committed last
/// and are dated by PostgreSQL's clock as last read, advanced by the writer's own.
@Suite("The writer's append without the probe round trip")
struct SkippedRoundTripTests {
    @Test("batches without the round trip keep recording times in order and within PostgreSQL's clock")
    func recordingTimes() throws {
        let db = try TestDatabase.create("skiptime")
        let pool = db.pool(size: 2)
        defer { pool.close() }
        let c = try db.connect()
        let before = try c.query("SELECT ledger.micros(clock_timestamp()) AS t").int64(0, "t")
        let committer = GroupCommitter(pool: pool)
        for n in 0..<300 {
            _ = try committer.append([sampleEvent(key: "t-\(n)", stream: "order-T\(n % 7)")])
            if n % 100 == 99 { Thread.sleep(forTimeInterval: 0.3) }   // clock readings age
        }
        committer.shutdown()
        let after = try c.query("SELECT ledger.micros(clock_timestamp()) AS t").int64(0, "t")
        #expect(committer.stats.roundTripsSkipped > 200, "\(committer.stats)")
        let times = try c.query("SELECT ledger.micros(recorded_at) AS t FROM ledger.events ORDER BY position")
        let recorded = try (0..<times.count).map { try times.int64($0, "t") }
        #expect(recorded.count == 300)
        #expect(recorded == recorded.sorted(), "recording times never go back along the log")
        #expect(recorded.allSatisfy { $0 >= before && $0 <= after }, "within PostgreSQL's clock over the run")
        guard case .intact(let events, _) = try ChainVerifier().verify(on: c) else {
            Issue.record("the chain does not verify")
            return
        }
        #expect(events == 300)
    }

    @Test("a batch that waited for the append lock past the lag limit is retried with the round trip and dated after the wait")
    func lockWait() throws {
        let db = try TestDatabase.create("skiplock")
        let pool = db.pool(size: 2)
        defer { pool.close() }
        let committer = GroupCommitter(pool: pool)
        defer { committer.shutdown() }
        for n in 0..<3 { _ = try committer.append([sampleEvent(key: "l-\(n)", stream: "order-L")]) }
        #expect(committer.stats.roundTripsSkipped >= 1)
        let holder = try db.connect()
        let late = Mutex<[AppendOutcome]?>(nil)
        let done = DispatchSemaphore(value: 0)
        let released = try holder.transaction { h -> Int64 in
            _ = try h.query("SELECT pg_advisory_xact_lock($1)", [.int(AppendLock.key)])   // as `ledger rebuild` holds it
            Thread.detachNewThread {
                late.withLock { $0 = try? committer.append([sampleEvent(key: "late", stream: "order-LATE")]) }
                done.signal()
            }
            Thread.sleep(forTimeInterval: 0.6)
            return try h.query("SELECT ledger.micros(clock_timestamp()) AS t").int64(0, "t")
        }
        #expect(done.wait(timeout: .now() + 10) == .success)
        let receipt = try #require(late.withLock { $0 }?.first?.receipt)
        #expect(receipt.recordedAt.microseconds >= released, "dated once the lock was held, not before the wait")
        #expect(committer.stats.retriedBatches >= 1, "\(committer.stats)")
        guard case .intact(let events, _) = try ChainVerifier().verify(on: holder) else {
            Issue.record("the chain does not verify")
            return
        }
        #expect(events == 4)
    }

    @Test("a delivery another writer stored just before, taken for new by the skip path, is answered as its duplicate")
    func headMovedOverTheSameKey() throws {
        let db = try TestDatabase.create("skipsamekey")
        let pool = db.pool(size: 2)
        defer { pool.close() }
        let committer = GroupCommitter(pool: pool)
        defer { committer.shutdown() }
        let other = try db.connect()
        for n in 0..<3 { _ = try committer.append([sampleEvent(key: "w-\(n)", stream: "order-W")]) }
        #expect(committer.stats.roundTripsSkipped >= 1)
        // The same delivery reaches another writer first: its key and stream are new to this one,
        // and its position is the one this writer's next batch takes.
        let stored = try other.transaction { try EventStore().append([sampleEvent(key: "same", stream: "order-S")], on: $0) }
        let answer = try committer.append([sampleEvent(key: "same", stream: "order-S")])
        guard case .duplicate(let receipt, _) = answer.first else {
            Issue.record("not answered as a duplicate: \(answer)")
            return
        }
        #expect(receipt.position == stored.first?.receipt?.position)
        #expect(try count("SELECT count(*) AS n FROM ledger.events WHERE idempotency_key = 'same'", on: other) == 1)
        #expect(committer.stats.retriedBatches == 1, "\(committer.stats)")
        #expect(try ChainVerifier().verify(on: other) == .intact(events: 4, head: 4))
    }

    @Test("another writer appending between two batches is caught by the position's index, and the batch retried after it without a probe cooldown")
    func anotherWriterBetweenBatches() throws {
        let db = try TestDatabase.create("skipother")
        let pool = db.pool(size: 2)
        defer { pool.close() }
        let committer = GroupCommitter(pool: pool)
        defer { committer.shutdown() }
        let other = try db.connect()
        for n in 0..<3 { _ = try committer.append([sampleEvent(key: "w-\(n)", stream: "order-W")]) }
        let skippedBefore = committer.stats.roundTripsSkipped
        #expect(skippedBefore >= 1, "the writer's own batches skip the round trip")
        _ = try other.transaction {
            try EventStore().append(encoded: [sampleEvent(key: "x-1", stream: "order-X")].map(EventStore.itemJSON), on: $0)
        }
        let next = try committer.append([sampleEvent(key: "w-3", stream: "order-W")])
        #expect(next.first?.receipt?.position == 5, "after the other writer's event at 4")
        #expect(next.first?.receipt?.streamVersion == 4)
        // Not a miss: nothing the hints guessed was wrong. The retry and the batches after it
        // make the round trip for a while (another writer may still be at work), then skip it again.
        #expect(committer.stats.probeHintMisses == 0 && committer.stats.retriedBatches == 1, "\(committer.stats)")
        let skippedAfterRetry = committer.stats.roundTripsSkipped
        for n in 4..<(4 + ProbeHints.shortestCooldown - 1) {
            _ = try committer.append([sampleEvent(key: "w-\(n)", stream: "order-W")])
        }
        #expect(committer.stats.roundTripsSkipped == skippedAfterRetry, "\(committer.stats)")
        let after = try committer.append([sampleEvent(key: "w-last", stream: "order-W")])
        #expect(after.first?.receipt?.position == 5 + Int64(ProbeHints.shortestCooldown))
        #expect(committer.stats.roundTripsSkipped == skippedAfterRetry + 1, "\(committer.stats)")
        #expect(committer.stats.probeHintMisses == 0 && committer.stats.retriedBatches == 1, "\(committer.stats)")
        guard case .intact(let events, _) = try ChainVerifier().verify(on: other) else {
            Issue.record("the chain does not verify")
            return
        }
        #expect(events == 5 + Int64(ProbeHints.shortestCooldown))
    }
}
