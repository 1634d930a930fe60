import LedgerCore
import LedgerPostgres
import LedgerTestSupport
import Testing

/// `EventLogStream.runWhole` reads the table as it lies and hands the events out in ledger
/// order, whatever the order the table holds them in: with one COPY, and through a cursor a
/// few rows a FETCH (as a paced rebuild reads it; 7 rows, so that batches end anywhere).
@Suite("The whole log read as it lies, handed out in ledger order")
struct EventLogStreamTests {
    static let fetching: [Int?] = [nil, 7]

    static func positions(_ c: PostgresConnection, reorderLimit: Int, fetching: Int? = nil) throws -> [Int64] {
        var stream = EventLogStream()
        stream.reorderLimit = reorderLimit
        var seen: [Int64] = []
        try stream.runWhole(on: c, fetching: fetching) { seen.append($0.position) }
        return seen
    }

    @Test("events moved out of place in the table (deleted and stored again) come out in ledger order, held back or read again by the key")
    func outOfPlaceEventsComeOutInOrder() throws {
        let c = try TestDatabase.create("logstream").connect()
        defer { c.close() }
        try ChainLinkCheckTests.fill(c, seed: 11)
        for fetching in Self.fetching {
            #expect(try Self.positions(c, reorderLimit: 4096, fetching: fetching) == Array(1...300))
        }
        // Positions 3 and 120 move to the end of the table, content and hash unchanged.
        try c.query("ALTER TABLE ledger.events DISABLE TRIGGER USER")
        try c.query("""
            WITH moved AS (DELETE FROM ledger.events WHERE position IN (3, 120) RETURNING *)
            INSERT INTO ledger.events SELECT * FROM moved
            """)
        try c.query("ALTER TABLE ledger.events ENABLE TRIGGER USER")
        let physical = try c.query("SELECT position FROM ledger.events").rows.compactMap { $0[0].flatMap(Int64.init) }
        #expect(physical.suffix(2).sorted() == [3, 120], "the two events now lie last: \(physical.suffix(3))")
        for fetching in Self.fetching {
            // Held back until they come (297 events wait for position 3)...
            #expect(try Self.positions(c, reorderLimit: 4096, fetching: fetching) == Array(1...300))
            // ...or, with room for fewer, read again by the key from position 3.
            #expect(try Self.positions(c, reorderLimit: 10, fetching: fetching) == Array(1...300))
            // The walk of the chain over it is intact either way (the held rows hashed from their copies).
            for limit in [4096, 10] {
                var walk = ChainContinuation.genesis
                var scratch: [UInt8] = []
                var stream = EventLogStream()
                stream.reorderLimit = limit
                try stream.runWhole(on: c, fetching: fetching) { event in
                    if case .broken(let position, let reason) = walk.check(event, scratch: &scratch) {
                        Issue.record("broken at \(position): \(reason) (limit \(limit), fetching \(fetching ?? 0))")
                    }
                }
                #expect(walk.head == 300, "limit \(limit), fetching \(fetching ?? 0)")
            }
        }
    }

    @Test("a missing position: every event is still handed out, in order, and the walk names the gap")
    func missingPositionIsNamed() throws {
        let c = try TestDatabase.create("logstream").connect()
        defer { c.close() }
        try ChainLinkCheckTests.fill(c, seed: 12)
        try c.query("ALTER TABLE ledger.events DISABLE TRIGGER USER")
        try c.query("DELETE FROM ledger.events WHERE position = 200")
        for fetching in Self.fetching { for limit in [4096, 10] {
            #expect(try Self.positions(c, reorderLimit: limit, fetching: fetching) == Array(1...199) + Array(201...300),
                    "limit \(limit), fetching \(fetching ?? 0)")
            var walk = ChainContinuation.genesis
            var scratch: [UInt8] = []
            var verdicts: [ChainVerdict] = []
            var stream = EventLogStream()
            stream.reorderLimit = limit
            try stream.runWhole(on: c, fetching: fetching) { event in
                if case .broken(let position, let reason) = walk.check(event, scratch: &scratch) {
                    verdicts.append(.broken(position: position, reason: reason))
                }
            }
            guard case .broken(let position, _)? = verdicts.first else {
                Issue.record("the gap was not named (limit \(limit), fetching \(fetching ?? 0))")
                continue
            }
            #expect(position == 200)
        } }
    }

    @Test("through a cursor, PostgreSQL waits between FETCHes while the reader works on the rows it has, the read by the key after an event out of place too")
    func cursorWaitsForTheReader() throws {
        let db = try TestDatabase.create("logstream")
        let c = try db.connect()
        defer { c.close() }
        try ChainLinkCheckTests.fill(c, seed: 13)
        let reader = try c.query("SELECT pg_backend_pid() AS pid").int64(0, "pid")
        let observer = try db.connect()
        defer { observer.close() }
        func statesMidRead(reorderLimit: Int) throws -> [String] {
            var states: [String] = []
            var seen: [Int64] = []
            var stream = EventLogStream()
            stream.reorderLimit = reorderLimit
            try stream.runWhole(on: c, fetching: 7) { event in
                seen.append(event.position)
                if seen.count == 100 {
                    states.append(try observer.query("SELECT state FROM pg_stat_activity WHERE pid = $1",
                                                     [.int(reader)]).string(0, "state"))
                }
            }
            #expect(seen == Array(1...300), "limit \(reorderLimit)")
            return states
        }
        #expect(try statesMidRead(reorderLimit: 4096) == ["idle in transaction"], "the reader's session, mid-read")
        // Position 3 moves to the table's end: with room for 10 held back, the rest is read
        // by the key from position 3, and the 100th event comes from that read.
        try c.query("ALTER TABLE ledger.events DISABLE TRIGGER USER")
        try c.query("WITH moved AS (DELETE FROM ledger.events WHERE position = 3 RETURNING *) INSERT INTO ledger.events SELECT * FROM moved")
        try c.query("ALTER TABLE ledger.events ENABLE TRIGGER USER")
        #expect(try statesMidRead(reorderLimit: 10) == ["idle in transaction"], "the reader's session, mid-read by the key")
    }
}
