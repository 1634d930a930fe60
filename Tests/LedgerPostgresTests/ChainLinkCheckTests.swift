import LedgerCore
import LedgerPostgres
import LedgerTestSupport
import Testing

/// A scan in stream order checking each link (`EventLogScan` + `ChainLinkCheck`) must
/// give the verdict of the walk from genesis (`ChainVerifier`) on any log.
@Suite("The hash chain checked link by link in stream order")
struct ChainLinkCheckTests {
    static func scanVerdict(_ c: PostgresConnection) throws -> ChainVerdict {
        try c.transaction { tx in
            var check = ChainLinkCheck()
            var scratch: [UInt8] = []
            try EventLogScan().run(on: tx) { row, previous in check.check(row, previousHash: previous, scratch: &scratch) }
            return check.verdict
        }
    }

    /// 300 events over 40 streams, appended in a seeded order.
    static func fill(_ c: PostgresConnection, seed: UInt64) throws {
        var random = JSONBTextTests.SplitMix(seed: seed)
        for batch in 0..<6 {
            let events = (0..<50).map { i in
                sampleEvent(key: "k\(batch)-\(i)", stream: "order-S\(random.next() % 40)",
                            payload: #"{"status":\#(1 + random.next() % 6),"amount":"\#(random.next() % 1000).25"}"#)
            }
            _ = try c.transaction { try EventStore().append(events, on: $0) }
        }
    }

    @Test("intact, an altered event, an altered hash and a deleted event: the same verdict and position as the walk from genesis",
          arguments: [1, 2, 3, 4, 5, 6] as [UInt64])
    func sameVerdictAsTheWalk(seed: UInt64) throws {
        let c = try TestDatabase.create("chainlinks").connect()
        try Self.fill(c, seed: seed)
        #expect(try Self.scanVerdict(c) == .intact(events: 300, head: 300))
        #expect(try Self.scanVerdict(c) == ChainVerifier().verify(on: c))
        var random = JSONBTextTests.SplitMix(seed: seed &* 977)
        try c.query("ALTER TABLE ledger.events DISABLE TRIGGER USER")
        let altered = Int64(1 + random.next() % 300)
        switch seed % 3 {
        case 0:
            try c.query("UPDATE ledger.events SET payload = jsonb_set(payload, '{amount}', '\"1.00\"') WHERE position = $1", [.int(altered)])
        case 1:
            try c.query("UPDATE ledger.events SET hash = sha256(hash) WHERE position = $1", [.int(altered)])
        default:
            try c.query("DELETE FROM ledger.events WHERE position = $1", [.int(altered)])
        }
        // A second, later break: the lowest one is named, by both.
        if altered < 290 {
            try c.query("UPDATE ledger.events SET source = 'operator' WHERE position = $1", [.int(altered + 7)])
        }
        let walked = try ChainVerifier().verify(on: c)
        guard case .broken(let position, _) = walked else {
            Issue.record("the walk missed the alteration at \(altered)")
            return
        }
        #expect(position == altered)
        #expect(try Self.scanVerdict(c) == walked)
    }

    @Test("a row read in place hashes exactly as its StoredEvent does: with and without raw bytes, text beyond ASCII and escapes, and with each hashed column altered in turn")
    func rowHashesAsTheStoredEvent() throws {
        let c = try TestDatabase.create("chainrows").connect()
        var events = (0..<18).map { i in
            sampleEvent(key: "k\(i)-é", stream: "order-Ü\(i % 3)",
                        payload: #"{"status":\#(1 + i % 6),"note":"line\nbreak \"quoted\" ☃ \#(i)","amount":"\#(i).50"}"#)
        }
        events[3].raw = nil
        events[5].raw = [0x00, 0xFF, 0xFE, 0x0A]
        events[7].raw = []
        events[8].metadataJSON = #"{"signedWith":{"x-signature":"abc"},"verifiedBy":"signature"}"#
        _ = try c.transaction { try EventStore().append(events, on: $0) }
        try c.query("ALTER TABLE ledger.events DISABLE TRIGGER USER")
        // Each hashed column altered at a position of its own (the stored hash kept).
        try c.query("UPDATE ledger.events SET raw = '\\x01'::bytea WHERE position = 2")
        try c.query("UPDATE ledger.events SET metadata = '{\"verified\":false}' WHERE position = 3")
        try c.query("UPDATE ledger.events SET idempotency_key = 'other' WHERE position = 5")
        try c.query("UPDATE ledger.events SET observed_at = observed_at + interval '1 microsecond' WHERE position = 7")
        try c.query("UPDATE ledger.events SET recorded_at = recorded_at - interval '1 second' WHERE position = 9")
        try c.query("UPDATE ledger.events SET stream_version = 99 WHERE position = 10")
        try c.query("UPDATE ledger.events SET event_id = gen_random_uuid() WHERE position = 11")
        try c.query("UPDATE ledger.events SET raw = NULL WHERE position = 12")
        try c.query("UPDATE ledger.events SET stream = 'order-Ü9' WHERE position = 13")
        try c.query("UPDATE ledger.events SET type = 'OrderRegistered' WHERE position = 14")
        try c.query("UPDATE ledger.events SET source = 'operator' WHERE position = 15")
        try c.query("UPDATE ledger.events SET payload = jsonb_set(payload, '{amount}', '\"1.00\"') WHERE position = 16")
        try c.query("UPDATE ledger.events SET position = 19 WHERE position = 18")
        let wrong = Crypto.sha256(Array("not the previous hash".utf8))
        var compared = 0
        var matched = 0
        var scratch: [UInt8] = []
        try c.transaction { tx in
            try EventLogScan().run(on: tx) { row, previous in
                let stored = try StoredEvent(copyRow: row.row)
                for candidate in [previous ?? ChainHash.genesis, wrong] {
                    let inPlace = row.hashMatches(previous: candidate, scratch: &scratch)
                    #expect(inPlace == (ChainHash.hash(previous: candidate, event: stored) == stored.hash),
                            "event \(row.position)")
                    compared += 1
                    if inPlace { matched += 1 }
                }
            }
        }
        #expect(compared == 36)
        // The five events left alone (1, 4, 6, 8, 17) match with their true previous hash, the
        // others not, and none matches with a wrong one.
        #expect(matched == 5)
    }
}
