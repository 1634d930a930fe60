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
