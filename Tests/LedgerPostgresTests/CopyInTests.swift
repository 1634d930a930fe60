import LedgerPostgres
import LedgerTestSupport
import Testing

@Suite("COPY IN streaming")
struct CopyInTests {
    struct Abandoned: Error {}

    @Test("rows sent in pieces are all stored; a producer that fails stores nothing and leaves the connection usable")
    func streamingAndAbandoning() throws {
        let c = try TestDatabase.create("copyin").connect()
        try c.query("CREATE TABLE copied (n integer NOT NULL, label text NOT NULL)")
        let stored = try c.copyIn("COPY copied (n, label) FROM STDIN") { send in
            for piece in 0..<10 {
                try send(Array((0..<100).map { "\(piece * 100 + $0)\trow \($0)\n" }.joined().utf8))
            }
        }
        #expect(stored == 1000)
        #expect(try c.query("SELECT count(DISTINCT n) AS n FROM copied").int64(0, "n") == 1000)

        #expect(throws: Abandoned.self) {
            try c.copyIn("COPY copied (n, label) FROM STDIN") { send in
                try send(Array("5000\tlost\n".utf8))
                throw Abandoned()
            }
        }
        #expect(try c.query("SELECT count(*) AS n FROM copied").int64(0, "n") == 1000)

        // A row PostgreSQL refuses is a typed error naming the problem; nothing of that COPY stays.
        #expect(throws: PostgresError.self) {
            try c.copyIn("COPY copied (n, label) FROM STDIN") { send in try send(Array("1\tfine\nnot-a-number\tbad\n".utf8)) }
        }
        #expect(try c.query("SELECT count(*) AS n FROM copied").int64(0, "n") == 1000)
    }

    @Test("a producer that fails before the server is ready, or a COPY the server refuses, leaves the connection usable")
    func failuresBeforeTheCopyBegins() throws {
        let c = try TestDatabase.create("copyearly").connect()
        try c.query("CREATE TABLE copied (n integer NOT NULL)")
        // Fails at once, before any piece and before the server's answer can have arrived.
        #expect(throws: Abandoned.self) {
            try c.copyIn("COPY copied (n) FROM STDIN") { _ in throw Abandoned() }
        }
        #expect(try c.query("SELECT count(*) AS n FROM copied").int64(0, "n") == 0)
        // The server refuses the command itself: its error, and no COPY left half open.
        let refused = #expect(throws: PostgresError.self) {
            try c.copyIn("COPY no_such_table (n) FROM STDIN") { send in try send(Array("1\n".utf8)) }
        }
        #expect(refused.map { "\($0)".contains("no_such_table") } == true)
        // Pieces built before the answer arrived are sent once it does, in order.
        let stored = try c.copyIn("COPY copied (n) FROM STDIN") { send in
            for n in 1...3 { try send(Array("\(n)\n".utf8)) }
        }
        #expect(stored == 3)
        #expect(try c.query("SELECT string_agg(n::text, ',' ORDER BY n) AS ns FROM copied").string(0, "ns") == "1,2,3")
        // Inside a transaction too (the writer's case): BEGIN goes first, the COPY's rows count.
        let inTransaction = try c.transaction { tx in
            try tx.copyIn("COPY copied (n) FROM STDIN") { send in try send(Array("4\n".utf8)) }
        }
        #expect(inTransaction == 1)
        #expect(try c.query("SELECT count(*) AS n FROM copied").int64(0, "n") == 4)
    }

    @Test("binary rows handed out in pieces as they are written (takePiece) store the same rows as the whole input at once")
    func binaryPieces() throws {
        let c = try TestDatabase.create("copypieces").connect()
        try c.query("CREATE TABLE whole (n integer NOT NULL, label text)")
        try c.query("CREATE TABLE pieces (n integer NOT NULL, label text)")
        func write(_ n: Int, to copy: inout BinaryCopyRows) {
            copy.startRow(fields: 2)
            copy.append(int32: Int32(n))
            copy.append(text: n % 7 == 0 ? nil : String(repeating: "é", count: n % 50))
        }
        var all = BinaryCopyRows()
        for n in 0..<500 { write(n, to: &all) }
        let whole = all.finish()
        #expect(try c.copyIn("COPY whole (n, label) FROM STDIN (FORMAT binary)") { send in try send(whole) } == 500)
        var sentPieces = 0
        let stored = try c.copyIn("COPY pieces (n, label) FROM STDIN (FORMAT binary)") { send in
            var copy = BinaryCopyRows()
            for n in 0..<500 {
                write(n, to: &copy)
                if n % 3 == 2 {
                    try send(copy.takePiece())
                    sentPieces += 1
                }
            }
            try send(copy.finish())
        }
        #expect(stored == 500 && sentPieces == 166)
        let differ = try c.query("""
            SELECT count(*) AS n FROM whole w FULL JOIN pieces p USING (n)
             WHERE w.n IS NULL OR p.n IS NULL OR w.label IS DISTINCT FROM p.label
            """).int64(0, "n")
        #expect(differ == 0)
    }
}
