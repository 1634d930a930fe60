import LedgerCore
import LedgerPostgres
import LedgerTestSupport
import Testing

@Suite("COPY OUT streaming")
struct CopyOutTests {
    @Test("COPY TO STDOUT streams every row in chunks, and a bad COPY is a typed error that leaves the connection usable")
    func streamsRows() throws {
        let db = try TestDatabase.create("copy")
        let c = try db.connect()
        _ = try c.transaction { try EventStore().append((1...500).map { sampleEvent(key: "copy-\($0)", stream: "order-CP\($0 % 7)") }, on: $0) }
        var chunks = 0
        var bytes: [UInt8] = []
        try c.copyOut("COPY (SELECT position, idempotency_key FROM ledger.events ORDER BY position) TO STDOUT WITH (FORMAT csv)") {
            chunks += 1
            bytes += $0
        }
        let lines = String(decoding: bytes, as: UTF8.self).split(separator: "\n")
        #expect(chunks >= 500)   // libpq hands COPY data over row by row
        #expect(lines.count == 500)
        #expect(lines.first == "1,copy-1")
        #expect(lines.last == "500,copy-500")

        #expect(throws: PostgresError.self) {
            try c.copyOut("COPY (SELECT no_such_column FROM ledger.events) TO STDOUT") { _ in }
        }
        #expect(try c.query("SELECT count(*) AS n FROM ledger.events").int64(0, "n") == 500)
    }
}
