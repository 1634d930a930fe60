#if canImport(Glibc)
import Glibc
#endif
import LedgerCore
import LedgerPostgres
import LedgerTestSupport
import Testing

/// The writer's own append path (Swift hash chain + COPY) against the SQL
/// reference, ledger.append_events: the same script of batches must give the
/// same outcomes, and every stored hash must be the one SQL computes.
@Suite("The writer's append path matches ledger.append_events")
struct ChainAppendTests {
    /// A seeded script: batches mixing new events, repeated keys (inside a batch
    /// and across batches), same keys with other content, expected versions
    /// (right and wrong), raw bytes or none, and payloads with unusual text.
    static func script(seed: UInt64, batches: Int) -> [[NewEvent]] {
        var rng = JSONBTextTests.SplitMix(seed: seed)
        var sent: [NewEvent] = []
        var versions: [String: Int] = [:]
        var out: [[NewEvent]] = []
        for b in 0..<batches {
            var batch: [NewEvent] = []
            for i in 0..<Int.random(in: 1...12, using: &rng) {
                let stream = "order-S\(Int.random(in: 0..<6, using: &rng))"
                switch Int.random(in: 0..<10, using: &rng) {
                case 0 where !sent.isEmpty:
                    batch.append(sent.randomElement(using: &rng)!)              // a redelivery
                case 1 where !sent.isEmpty:
                    var other = sent.randomElement(using: &rng)!                 // same key, other content
                    other.payloadJSON = #"{"changed":\#(b)}"#
                    batch.append(other)
                default:
                    let value = JSONBTextTests.randomValue(&rng, depth: 1)
                    let payload = JSONSerializer.string(.object([("n", .number("\(b).\(i)")), ("v", value)]))
                    var event = NewEvent(
                        stream: stream, type: "StatusObserved", source: "webhook", payloadJSON: payload,
                        raw: Bool.random(using: &rng) ? Array(payload.utf8) : nil,
                        metadataJSON: #"{"requestId":"r\#(b)-\#(i)","verified":true}"#,
                        idempotencyKey: "k-\(b)-\(i)-\"\\", observedAt: Timestamp(microseconds: 1_767_225_600_000_000 + Int64(b)))
                    if Int.random(in: 0..<4, using: &rng) == 0 {
                        let v = versions[stream] ?? 0
                        event.expectedVersion = Bool.random(using: &rng) ? v : v + 5
                    }
                    if Int.random(in: 0..<5, using: &rng) == 0 { batch.append(event) }  // the same key twice in a batch
                    batch.append(event)
                    sent.append(event)
                }
            }
            for e in batch where e.expectedVersion == nil || e.expectedVersion == versions[e.stream] ?? 0 {
                versions[e.stream, default: 0] += 1   // an approximation: only steers the script
            }
            out.append(batch)
        }
        return out
    }

    /// What must agree between the paths (ids, hashes and times differ by nature).
    static func shape(_ o: AppendOutcome) -> String {
        switch o {
        case .appended(let r): "appended \(r.position) v\(r.streamVersion)"
        case .duplicate(let r, let n): "duplicate \(r.position) v\(r.streamVersion) x\(n)"
        case .keyConflict(let r): "conflict \(r.position)"
        case .versionConflict(let v): "version \(v)"
        }
    }

    @Test("a seeded script of 200 batches gives the same outcomes through both paths")
    func sameOutcomes() throws {
        let chain = try TestDatabase.create("chainpath").connect()
        let sql = try TestDatabase.create("sqlpath").connect()
        let store = EventStore()
        let cache = StreamVersionCache()   // as the GroupCommitter's writer keeps it
        for batch in Self.script(seed: 7, batches: 200) {
            let viaChain = try chain.transaction { try store.append(prepared: batch.map(PreparedEvent.init), on: $0, cache: cache) }
            cache.commit()
            let viaSQL = try sql.transaction { try store.append(encoded: batch.map(EventStore.itemJSON), on: $0) }
            #expect(viaChain.map(Self.shape) == viaSQL.map(Self.shape))
        }
        let counted = "SELECT count(*) AS n FROM ledger.events"
        #expect(try count(counted, on: chain) == (try count(counted, on: sql)))
        #expect(try count(counted, on: chain) > 500)
    }

    @Test("every hash the writer computed is the one ledger.event_hash computes, and the chain verifies")
    func hashesAgreeWithSQL() throws {
        let c = try TestDatabase.create("chainhash").connect()
        let store = EventStore()
        for batch in Self.script(seed: 11, batches: 60) {
            let outcomes = try c.transaction { try store.append(prepared: batch.map(PreparedEvent.init), on: $0) }
            // The receipts carry the hashes the writer computed and stored.
            for case .appended(let r) in outcomes {
                let stored = try c.query("SELECT hash FROM ledger.events WHERE position = $1", [.int(r.position)])
                #expect(try stored.bytes(0, "hash") == r.hash)
            }
        }
        let mismatched = try count("""
            SELECT count(*) AS n FROM ledger.events e
              LEFT JOIN ledger.events p ON p.position = e.position - 1
             WHERE e.hash <> ledger.event_hash(coalesce(p.hash, decode(repeat('00', 32), 'hex')), e.position,
                   e.event_id, e.stream, e.stream_version, e.type, e.source, e.payload, e.raw, e.metadata,
                   e.idempotency_key, e.recorded_at, e.observed_at)
            """, on: c)
        #expect(mismatched == 0)
        #expect(try count("SELECT count(*) AS n FROM ledger.events", on: c) > 150)
        guard case .intact = try ChainVerifier().verify(on: c) else {
            Issue.record("the chain does not verify")
            return
        }
    }

    @Test("batches through the two paths interleave into one intact chain")
    func pathsInterleave() throws {
        let c = try TestDatabase.create("chainmix").connect()
        let store = EventStore()
        for (n, batch) in Self.script(seed: 3, batches: 40).enumerated() {
            _ = try c.transaction { connection in
                n % 2 == 0 ? try store.append(prepared: batch.map(PreparedEvent.init), on: connection)
                           : try store.append(encoded: batch.map(EventStore.itemJSON), on: connection)
            }
        }
        let verdict = try ChainVerifier().verify(on: c)
        guard case .intact(let events, _) = verdict else {
            Issue.record("the chain does not verify: \(verdict)")
            return
        }
        #expect(events > 100)
    }

    @Test("event ids are UUID version 7: later ids sort later, and PostgreSQL stores them as written")
    func timeOrderedIDs() throws {
        let c = try TestDatabase.create("uuid7").connect()
        var ids: [String] = []
        for n in 0..<3 {
            let outcomes = try c.transaction { try EventStore().append([sampleEvent(key: "u\(n)", stream: "order-U")], on: $0) }
            ids.append(try #require(outcomes.first?.receipt?.eventID))
            usleep(3_000)   // a new millisecond
        }
        #expect(ids.allSatisfy { Array($0.utf8)[14] == UInt8(ascii: "7") })
        #expect(ids == ids.sorted())
        let stored = try c.query("SELECT event_id::text AS id FROM ledger.events ORDER BY position")
        #expect(try (0..<stored.count).map { try stored.string($0, "id") } == ids)
    }

    @Test("the writer's remembered stream versions are not trusted after another writer appended, or after a failed batch")
    func streamVersionCache() throws {
        let db = try TestDatabase.create("streamcache")
        let pool = db.pool(size: 4)
        defer { pool.close() }
        let committer = GroupCommitter(pool: pool, projector: FailOnceProjector())
        defer { committer.shutdown() }
        let other = try db.connect()
        func version(_ outcomes: [AppendOutcome]) -> Int? { outcomes.first?.receipt?.streamVersion }

        #expect(version(try committer.append([sampleEvent(key: "c1", stream: "order-C")])) == 1)
        #expect(version(try committer.append([sampleEvent(key: "c2", stream: "order-C")])) == 2)
        // Another writer appends to the same stream behind the committer's back.
        _ = try other.transaction { try EventStore().append([sampleEvent(key: "o1", stream: "order-C")], on: $0) }
        #expect(version(try committer.append([sampleEvent(key: "c3", stream: "order-C")])) == 4)
        // A batch that fails (its projection throws) leaves nothing behind, nor in what the writer knows.
        #expect(throws: (any Error).self) { try committer.append([sampleEvent(key: "fail", stream: "order-C")]) }
        #expect(version(try committer.append([sampleEvent(key: "c4", stream: "order-C")])) == 5)
        // Expected versions are checked against the same knowledge.
        let stale = try committer.append([sampleEvent(key: "c5", stream: "order-C", expectedVersion: 4)])
        #expect(stale == [.versionConflict(currentVersion: 5)])
        guard case .intact(let events, _) = try ChainVerifier().verify(on: other) else {
            Issue.record("the chain does not verify")
            return
        }
        #expect(events == 5)
    }

    @Test("an item the writer cannot render takes the SQL path, which names the error and appends nothing")
    func unrenderablePayload() throws {
        let c = try TestDatabase.create("chainbad").connect()
        let bad = NewEvent(stream: "order-B", type: "StatusObserved", source: "webhook", payloadJSON: "{not json",
                           idempotencyKey: "bad", observedAt: Timestamp(seconds: 1_767_225_600))
        #expect(throws: PostgresError.self) {
            try c.transaction { try EventStore().append([sampleEvent(key: "fine"), bad], on: $0) }
        }
        #expect(try count("SELECT count(*) AS n FROM ledger.events", on: c) == 0)
    }
}

/// Fails the projection of the batch carrying the key "fail", once.
struct FailOnceProjector: BatchProjector {
    struct Refused: Error {}
    func project(_ appended: [Item], prepared: (any Sendable)?,
                 on connection: PostgresConnection) throws {
        if appended.contains(where: { $0.prepared.event.idempotencyKey == "fail" }) { throw Refused() }
    }
}
