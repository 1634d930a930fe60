import Foundation
import LedgerCore
@testable import LedgerPostgres
import LedgerTestSupport
import Synchronization
import Testing

/// The writer skips the probes of keys and streams it never sent (ProbeHints):
/// the filters never forget what they held, a key or stream that existed all the
/// same is caught by the unique constraints and the batch retried with every
/// probe, and the outcomes are those of the SQL reference whatever the hints said.
@Suite("The writer's probe hints")
struct ProbeHintsTests {
    @Test("a Bloom filter never answers no for a member, and rarely yes for a stranger")
    func bloomFilter() {
        var rng = JSONBTextTests.SplitMix(seed: 21)
        var filter = BloomFilter(bits: 1 << 17)
        let members = (0..<10_000).map { _ in "web3:" + String(rng.next(), radix: 16) }
        for m in members { filter.insert(m) }
        #expect(members.allSatisfy(filter.mayContain))
        let strangers = (0..<10_000).map { _ in "order-" + String(rng.next(), radix: 36) }
        let falseYes = strangers.filter(filter.mayContain).count
        #expect(falseYes < 300, "\(falseYes) of 10,000 strangers answered maybe (13 bits a member)")
        #expect(filter.insertions == members.count)
    }

    @Test("keys rotate through two filters; a miss makes the writer probe everything for a while, longer if misses repeat")
    func hintsAndCooldown() {
        let hints = ProbeHints(keysPerGeneration: 100, streamBits: 1 << 12)
        #expect(!hints.mayExist(key: "k0") && !hints.mayExist(stream: "order-A"))
        for n in 0..<150 { hints.remember(key: "k\(n)", stream: "order-A") }
        #expect((0..<150).allSatisfy { hints.mayExist(key: "k\($0)") }, "the current and the previous generation")
        for n in 150..<350 { hints.remember(key: "k\(n)", stream: "order-B") }
        #expect(!(0..<100).allSatisfy { hints.mayExist(key: "k\($0)") }, "two generations later the first keys are forgotten")
        #expect(hints.mayExist(stream: "order-A"), "streams are never forgotten")

        #expect(hints.beginBatch())
        hints.missed()
        let probing = (0..<ProbeHints.shortestCooldown).map { _ in hints.beginBatch() }
        #expect(probing.allSatisfy { !$0 })
        #expect(hints.beginBatch())
        hints.missed()   // soon after the last one: twice as long
        #expect((0..<(2 * ProbeHints.shortestCooldown)).allSatisfy { _ in !hints.beginBatch() })
        #expect(hints.beginBatch())
    }

    @Test("after another writer moved the head, batches make the round trip for a while but still skip the probes")
    func headMovedCooldown() {
        let hints = ProbeHints()
        #expect(hints.beginBatch() && hints.roundTripAllowed)
        hints.headMoved()
        let batches = (0..<ProbeHints.shortestCooldown).map { _ in (hints.beginBatch(), hints.roundTripAllowed) }
        #expect(batches.allSatisfy { optimistic, skipsRoundTrip in optimistic && !skipsRoundTrip })
        #expect(hints.beginBatch() && hints.roundTripAllowed)
        hints.headMoved()   // soon after the last one: twice as long
        #expect((0..<(2 * ProbeHints.shortestCooldown)).allSatisfy { _ in hints.beginBatch() && !hints.roundTripAllowed })
        #expect(hints.beginBatch() && hints.roundTripAllowed)
    }

    /// The seeded script of ChainAppendTests through the writer's path with hints,
    /// on a log that another writer started: old keys and streams the hints never
    /// saw come back, so batches miss, roll back and are tried again with probes.
    @Test("with hints, a seeded script gives the SQL path's outcomes, misses included")
    func sameOutcomesWithHints() throws {
        let chain = try TestDatabase.create("hintpath").connect()
        let sql = try TestDatabase.create("hintsql").connect()
        let store = EventStore()
        let script = ChainAppendTests.script(seed: 19, batches: 160)
        // The first 40 batches reach both logs through the SQL path: the writer's hints know none of them.
        for batch in script.prefix(40) {
            _ = try chain.transaction { try store.append(encoded: batch.map(EventStore.itemJSON), on: $0) }
            _ = try sql.transaction { try store.append(encoded: batch.map(EventStore.itemJSON), on: $0) }
        }
        let cache = StreamVersionCache()
        let hints = ProbeHints()
        var misses = 0, firstTime = 0
        for batch in script.dropFirst(40) {
            let prepared = batch.map(PreparedEvent.init)
            var viaChain: [AppendOutcome]
            do {
                viaChain = try chain.transaction { try store.append(prepared: prepared, on: $0, cache: cache, hints: hints) }
                cache.commit()
                firstTime += 1
            } catch is ProbeHintMiss {
                misses += 1
                cache.invalidate()   // as the committer does after any failure; the retry probes everything
                viaChain = try chain.transaction { try store.append(prepared: prepared, on: $0, cache: cache) }
                cache.commit()
            }
            let viaSQL = try sql.transaction { try store.append(encoded: batch.map(EventStore.itemJSON), on: $0) }
            #expect(viaChain.map(ChainAppendTests.shape) == viaSQL.map(ChainAppendTests.shape))
        }
        #expect(misses > 0, "the script brought back keys or streams the hints never saw")
        #expect(firstTime > misses)
        let counted = "SELECT count(*) AS n FROM ledger.events"
        #expect(try count(counted, on: chain) == (try count(counted, on: sql)))
        guard case .intact = try ChainVerifier().verify(on: chain) else {
            Issue.record("the chain does not verify")
            return
        }
    }

    @Test("the committer retries a batch whose key or stream existed unseen: a duplicate stays a duplicate, a version follows")
    func committerRetriesAMiss() throws {
        let db = try TestDatabase.create("hintmiss")
        let pool = db.pool(size: 2)
        defer { pool.close() }
        // Another writer (the SQL path) appended before this committer existed.
        let other = try db.connect()
        _ = try other.transaction {
            try EventStore().append(encoded: [sampleEvent(key: "old-1", stream: "order-OLD"),
                                              sampleEvent(key: "old-2", stream: "order-OLD")].map(EventStore.itemJSON), on: $0)
        }
        let committer = GroupCommitter(pool: pool)
        defer { committer.shutdown() }

        let redelivered = try committer.append([sampleEvent(key: "old-1", stream: "order-OLD")])
        guard case .duplicate(let receipt, _)? = redelivered.first else {
            Issue.record("a redelivery of an event the writer never saw was not a duplicate: \(redelivered)")
            return
        }
        #expect(receipt.position == 1)
        let statsAfterKey = committer.stats
        #expect(statsAfterKey.probeHintMisses == 1 && statsAfterKey.retriedBatches == 1, "\(statsAfterKey)")

        // Another writer starts a stream the committer never sent to; past the cooldown the
        // committer takes it for new, is caught, and puts its event at version 2.
        _ = try other.transaction {
            try EventStore().append(encoded: [sampleEvent(key: "other-1", stream: "order-OTHER")].map(EventStore.itemJSON), on: $0)
        }
        for n in 0..<ProbeHints.shortestCooldown {
            _ = try committer.append([sampleEvent(key: "filler-\(n)", stream: "order-F\(n)")])
        }
        #expect(committer.stats.probeHintMisses == 1, "fillers are new keys on new streams: no miss")
        let appended = try committer.append([sampleEvent(key: "other-2", stream: "order-OTHER")])
        #expect(appended.first?.receipt?.streamVersion == 2)
        #expect(committer.stats.probeHintMisses == 2)
        #expect(try count("SELECT count(*) AS n FROM ledger.events WHERE stream = 'order-OTHER'", on: other) == 2)
        guard case .intact(let events, _) = try ChainVerifier().verify(on: other) else {
            Issue.record("the chain does not verify")
            return
        }
        #expect(events == 4 + Int64(ProbeHints.shortestCooldown))
    }
}

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
