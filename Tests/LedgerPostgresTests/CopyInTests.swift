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
            try c.copyIn("COPY copied (n, label) FROM STDIN", data: Array("1\tfine\nnot-a-number\tbad\n".utf8))
        }
        #expect(try c.query("SELECT count(*) AS n FROM copied").int64(0, "n") == 1000)
    }
}
