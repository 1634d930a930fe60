import LedgerCore
import LedgerPostgres
import LedgerTestSupport
import Testing

@Suite("COPY OUT streaming, in the binary format")
struct CopyOutTests {
    struct Stop: Error {}

    /// Rows of (n, label, stamp, blob), NULLs in every column but n.
    static let sql = """
        COPY (SELECT n::bigint, CASE WHEN n % 7 = 0 THEN NULL ELSE 'row ' || n END,
                     CASE WHEN n % 5 = 0 THEN NULL ELSE timestamptz '2026-01-01 00:00:00+00' + n * interval '1 microsecond' END,
                     CASE WHEN n % 3 = 0 THEN NULL ELSE decode(repeat('ab', n % 50), 'hex') END
                FROM generate_series(1, 3000) AS n ORDER BY n) TO STDOUT (FORMAT binary)
        """

    struct Row: Equatable { var n: Int64; var label: String?; var stamp: Timestamp?; var blob: [UInt8]? }

    static func rows(fromPieces pieces: [[UInt8]]) throws -> [Row] {
        var reader = BinaryCopyReader()
        var rows: [Row] = []
        for piece in pieces {
            try piece.withUnsafeBytes { bytes in
                try reader.read(bytes) { r in
                    rows.append(Row(n: try r.int64(0), label: r.string(1), stamp: try r.timestamp(2), blob: r.bytes(3)))
                }
            }
        }
        try reader.finish()
        return rows
    }

    @Test("every row arrives with its values and NULLs, however the output is cut into pieces")
    func piecesOfAnySize() throws {
        let c = try TestDatabase.create("copyout").connect()
        var output: [UInt8] = []
        var pieces: [[UInt8]] = []
        let sent = try c.copyOut(Self.sql) { piece in
            output += piece
            pieces.append(Array(piece))
        }
        #expect(sent == 3000)
        let whole = try Self.rows(fromPieces: pieces)
        #expect(whole.count == 3000)
        #expect(whole[6] == Row(n: 7, label: nil, stamp: Timestamp(microseconds: 1_767_225_600_000_007), blob: Array(repeating: 0xAB, count: 7)))
        #expect(whole[14] == Row(n: 15, label: "row 15", stamp: nil, blob: nil))
        #expect(whole[104] == Row(n: 105, label: nil, stamp: nil, blob: nil))
        #expect(whole[0] == Row(n: 1, label: "row 1", stamp: Timestamp(microseconds: 1_767_225_600_000_001), blob: [0xAB]))
        // The same bytes cut at seeded random places, one byte at a time included, read the same.
        var random = JSONBTextTests.SplitMix(seed: 21)
        for round in 0..<200 {
            var cut: [[UInt8]] = []
            var at = 0
            while at < output.count {
                let size = round == 0 ? 1 : 1 + Int(random.next() % 700)
                cut.append(Array(output[at..<min(output.count, at + size)]))
                at += size
            }
            #expect(try Self.rows(fromPieces: cut) == whole, "round \(round)")
        }
        // Output that stops before its trailer is refused.
        #expect(throws: PostgresError.self) { _ = try Self.rows(fromPieces: [Array(output.dropLast(2))]) }
    }

    @Test("a consumer that stops the COPY gets its own error back, and the connection works on; a refused COPY is a typed error")
    func stoppingAndRefusing() throws {
        let c = try TestDatabase.create("copyoutstop").connect()
        var seen = 0
        #expect(throws: Stop.self) {
            try c.copyOut("COPY (SELECT n FROM generate_series(1, 2000000) AS n) TO STDOUT") { _ in
                seen += 1
                if seen == 10 { throw Stop() }
            }
        }
        #expect(seen == 10)
        #expect(try c.query("SELECT 41 + 1 AS n").int64(0, "n") == 42)
        let refused = #expect(throws: PostgresError.self) {
            try c.copyOut("COPY (SELECT * FROM no_such_table) TO STDOUT") { _ in }
        }
        #expect(refused.map { "\($0)".contains("no_such_table") } == true)
        // Inside a transaction: its BEGIN goes first, and the COPY reads the transaction's rows.
        let counted = try c.transaction { tx -> Int in
            try tx.query("CREATE TEMP TABLE t AS SELECT 1 AS n")
            return try tx.copyOut("COPY t TO STDOUT") { _ in }
        }
        #expect(counted == 1)
    }
}
