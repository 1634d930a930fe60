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
            try EventLogScan().run(on: tx) { event, previous in check.check(event, previousHash: previous) }
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
}
