import LedgerCore
import LedgerPostgres
import LedgerTestSupport
import Testing

/// `EventLogStream.runWhole` reads the table as it lies and hands the events out in ledger
/// order, whatever the order the table holds them in.
@Suite("The whole log read as it lies, handed out in ledger order")
struct EventLogStreamTests {
    static func positions(_ c: PostgresConnection, reorderLimit: Int) throws -> [Int64] {
        var stream = EventLogStream()
        stream.reorderLimit = reorderLimit
        var seen: [Int64] = []
        try stream.runWhole(on: c) { seen.append($0.position) }
        return seen
    }

    @Test("events moved out of place in the table (deleted and stored again) come out in ledger order, held back or read again by the key")
    func outOfPlaceEventsComeOutInOrder() throws {
        let c = try TestDatabase.create("logstream").connect()
        defer { c.close() }
        try ChainLinkCheckTests.fill(c, seed: 11)
        #expect(try Self.positions(c, reorderLimit: 4096) == Array(1...300))
        // Positions 3 and 120 move to the end of the table, content and hash unchanged.
        try c.query("ALTER TABLE ledger.events DISABLE TRIGGER USER")
        try c.query("""
            WITH moved AS (DELETE FROM ledger.events WHERE position IN (3, 120) RETURNING *)
            INSERT INTO ledger.events SELECT * FROM moved
            """)
        try c.query("ALTER TABLE ledger.events ENABLE TRIGGER USER")
        let physical = try c.query("SELECT position FROM ledger.events").rows.compactMap { $0[0].flatMap(Int64.init) }
        #expect(physical.suffix(2).sorted() == [3, 120], "the two events now lie last: \(physical.suffix(3))")
        // Held back until they come (297 events wait for position 3)...
        #expect(try Self.positions(c, reorderLimit: 4096) == Array(1...300))
        // ...or, with room for fewer, read again by the key from position 3.
        #expect(try Self.positions(c, reorderLimit: 10) == Array(1...300))
        // The walk of the chain over it is intact either way (the held rows hashed from their copies).
        for limit in [4096, 10] {
            var walk = ChainContinuation.genesis
            var scratch: [UInt8] = []
            var stream = EventLogStream()
            stream.reorderLimit = limit
            try stream.runWhole(on: c) { event in
                if case .broken(let position, let reason) = walk.check(event, scratch: &scratch) {
                    Issue.record("broken at \(position): \(reason) (limit \(limit))")
                }
            }
            #expect(walk.head == 300, "limit \(limit)")
        }
    }

    @Test("a missing position: every event is still handed out, in order, and the walk names the gap")
    func missingPositionIsNamed() throws {
        let c = try TestDatabase.create("logstream").connect()
        defer { c.close() }
        try ChainLinkCheckTests.fill(c, seed: 12)
        try c.query("ALTER TABLE ledger.events DISABLE TRIGGER USER")
        try c.query("DELETE FROM ledger.events WHERE position = 200")
        for limit in [4096, 10] {
            #expect(try Self.positions(c, reorderLimit: limit) == Array(1...199) + Array(201...300), "limit \(limit)")
            var walk = ChainContinuation.genesis
            var scratch: [UInt8] = []
            var verdicts: [ChainVerdict] = []
            var stream = EventLogStream()
            stream.reorderLimit = limit
            try stream.runWhole(on: c) { event in
                if case .broken(let position, let reason) = walk.check(event, scratch: &scratch) {
                    verdicts.append(.broken(position: position, reason: reason))
                }
            }
            guard case .broken(let position, _)? = verdicts.first else {
                Issue.record("the gap was not named (limit \(limit))")
                continue
            }
            #expect(position == 200)
        }
    }
}
