import LedgerCore
import LedgerPostgres
import LedgerTestSupport
import Testing

@Suite("Appending events")
struct AppendTests {
    let db: TestDatabase
    init() throws { db = try TestDatabase.create("append") }

    @Test("an appended event gets position 1, stream version 1 and a 32-byte hash")
    func firstAppend() throws {
        let c = try db.connect()
        let outcomes = try c.transaction { try EventStore().append([sampleEvent(key: "k1")], on: $0) }
        guard case .appended(let receipt) = outcomes[0] else { Issue.record("not appended: \(outcomes)"); return }
        #expect(receipt.position == 1)
        #expect(receipt.streamVersion == 1)
        #expect(receipt.hash.count == 32)
        let stored = try EventStore().read(stream: "order-A1", on: c)
        #expect(stored.count == 1)
        #expect(stored[0].raw == Array(#"{"status":3,"amount":"40.00"}"#.utf8))
    }

    @Test("the same key sent twice leaves one event and counts one redelivery")
    func sameKeyTwice() throws {
        let c = try db.connect()
        let store = EventStore()
        let first = try c.transaction { try store.append([sampleEvent(key: "dup")], on: $0) }
        let second = try c.transaction { try store.append([sampleEvent(key: "dup")], on: $0) }
        guard case .appended(let original) = first[0], case .duplicate(let again, let redeliveries) = second[0] else {
            Issue.record("unexpected outcomes \(first) \(second)"); return
        }
        #expect(again == original)
        #expect(redeliveries == 1)
        #expect(try count("SELECT count(*) AS n FROM ledger.events WHERE idempotency_key = 'dup'", on: c) == 1)
    }

    @Test("the same key from 16 concurrent tasks leaves exactly one event")
    func sameKeyConcurrently() async throws {
        let pool = db.pool(size: 16)
        let committer = GroupCommitter(pool: pool)
        let outcomes = try await withThrowingTaskGroup(of: AppendOutcome.self) { group in
            for _ in 0..<16 {
                group.addTask { try await committer.append([sampleEvent(key: "race")])[0] }
            }
            var all: [AppendOutcome] = []
            for try await o in group { all.append(o) }
            return all
        }
        #expect(outcomes.filter { if case .appended = $0 { return true } else { return false } }.count == 1)
        #expect(outcomes.filter(\.isDuplicate).count == 15)
        #expect(Set(outcomes.compactMap { $0.receipt?.position }).count == 1)
        let c = try db.connect()
        #expect(try count("SELECT count(*) AS n FROM ledger.events WHERE idempotency_key = 'race'", on: c) == 1)
        #expect(try EventStore().redeliveries(position: outcomes[0].receipt!.position, on: c) == 15)
        committer.shutdown()
        pool.close()
    }

    @Test("the same key with different content is refused and nothing is appended")
    func keyConflict() throws {
        let c = try db.connect()
        let store = EventStore()
        _ = try c.transaction { try store.append([sampleEvent(key: "kc", payload: #"{"status":1}"#)], on: $0) }
        let again = try c.transaction { try store.append([sampleEvent(key: "kc", payload: #"{"status":4}"#)], on: $0) }
        guard case .keyConflict = again[0] else { Issue.record("expected a key conflict, got \(again)"); return }
        #expect(try count("SELECT count(*) AS n FROM ledger.events WHERE idempotency_key = 'kc'", on: c) == 1)
        #expect(try store.read(stream: "order-A1", on: c).first { $0.idempotencyKey == "kc" }?.payloadJSON == #"{"status": 1}"#)
    }

    @Test("an append at the wrong expected version is reported with the stream's current version")
    func versionConflict() throws {
        let c = try db.connect()
        let store = EventStore()
        let ok = try c.transaction {
            try store.append([sampleEvent(key: "v1", stream: "order-V", expectedVersion: 0),
                              sampleEvent(key: "v2", stream: "order-V", expectedVersion: 1)], on: $0)
        }
        #expect(ok.allSatisfy { if case .appended = $0 { return true } else { return false } })
        let stale = try c.transaction { try store.append([sampleEvent(key: "v3", stream: "order-V", expectedVersion: 1)], on: $0) }
        #expect(stale[0] == .versionConflict(currentVersion: 2))
        #expect(try store.read(stream: "order-V", on: c).count == 2)
    }

    @Test("one refused item does not fail the others in its batch")
    func mixedBatch() throws {
        let c = try db.connect()
        let out = try c.transaction {
            try EventStore().append([sampleEvent(key: "m1", stream: "order-M"),
                                     sampleEvent(key: "m2", stream: "order-M", expectedVersion: 7),
                                     sampleEvent(key: "m3", stream: "order-M")], on: $0)
        }
        #expect(out[1] == .versionConflict(currentVersion: 1))
        #expect(out[2].receipt?.streamVersion == 2)
    }

    @Test("positions are gapless even when duplicates are refused in the same batch")
    func gapless() throws {
        let c = try db.connect()
        _ = try c.transaction {
            try EventStore().append((0..<50).map { sampleEvent(key: "g\($0 % 20)", stream: "order-G") }, on: $0)
        }
        let r = try c.query("SELECT count(*) AS n, max(position) - min(position) + 1 AS span FROM ledger.events WHERE stream = 'order-G'")
        #expect(try r.int64(0, "n") == 20)
        #expect(try r.int64(0, "span") == 20)
        #expect(try ChainVerifier().verify(on: c) == .intact(events: try count("SELECT count(*) AS n FROM ledger.events", on: c),
                                                                  head: try EventStore().head(on: c).position))
    }
}
