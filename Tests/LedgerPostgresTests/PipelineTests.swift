import LedgerCore
import LedgerPostgres
import LedgerTestSupport
import Testing

/// Transactions save round trips (BEGIN with the first statement, deferred
/// statements with COMMIT) without changing what commits.
@Suite("Pipelined transactions and binary array parameters")
struct PipelineTests {
    @Test("deferred statements run at COMMIT, in order, inside the transaction; BEGIN rides with the first statement")
    func deferredRunAtCommit() throws {
        let c = try TestDatabase.create("pipeline").connect()
        try c.query("CREATE TABLE log (n integer PRIMARY KEY, seen bigint NOT NULL)")
        let seenInside = try c.transaction { c -> Int64 in
            try c.query("INSERT INTO log VALUES (1, 0)")
            try c.deferUntilCommit("INSERT INTO log VALUES ($1, (SELECT count(*) FROM log))", [.int(2)], prepared: true)
            try c.deferUntilCommit("INSERT INTO log VALUES ($1, (SELECT count(*) FROM log))", [.int(3)])
            // Not run yet: only the first insert is visible inside the transaction.
            return try c.query("SELECT count(*) AS n FROM log").int64(0, "n")
        }
        #expect(seenInside == 1)
        let rows = try c.query("SELECT n, seen FROM log ORDER BY n")
        #expect(rows.count == 3)
        #expect(try rows.int64(1, "seen") == 1 && rows.int64(2, "seen") == 2, "in order, each seeing the ones before")
        // The three rows commit together: one transaction id.
        #expect(try c.query("SELECT count(DISTINCT xmin::text) AS n FROM log").int64(0, "n") == 1)
    }

    @Test("a deferred statement that fails fails the commit: nothing of the transaction stays, and the connection is usable")
    func deferredFailureRollsBack() throws {
        let c = try TestDatabase.create("pipelinefail").connect()
        try c.query("CREATE TABLE kept (n integer PRIMARY KEY)")
        try c.query("INSERT INTO kept VALUES (7)")
        #expect(throws: PostgresError.self) {
            try c.transaction { c in
                try c.query("INSERT INTO kept VALUES (1)")
                try c.deferUntilCommit("INSERT INTO kept VALUES ($1)", [.int(2)])
                try c.deferUntilCommit("INSERT INTO kept VALUES ($1)", [.int(7)])   // duplicate key
                try c.deferUntilCommit("INSERT INTO kept VALUES ($1)", [.int(3)])
            }
        }
        #expect(!c.inTransaction)
        #expect(try c.query("SELECT array_agg(n ORDER BY n)::text AS n FROM kept").string(0, "n") == "{7}")
        // The session is clean: a new transaction and plain statements work.
        try c.transaction { c in
            try c.query("INSERT INTO kept VALUES (8)")
            try c.deferUntilCommit("INSERT INTO kept VALUES ($1)", [.int(9)], prepared: true)
        }
        #expect(try c.query("SELECT array_agg(n ORDER BY n)::text AS n FROM kept").string(0, "n") == "{7,8,9}")
    }

    @Test("a failing first statement (sent with BEGIN) rolls back; a transaction that sends nothing commits nothing")
    func firstStatementFailsAndEmptyTransaction() throws {
        let c = try TestDatabase.create("pipelinefirst").connect()
        try c.query("CREATE TABLE t (n integer PRIMARY KEY)")
        #expect(throws: PostgresError.self) {
            try c.transaction { c in try c.query("INSERT INTO t VALUES ('not a number')") }
        }
        #expect(try c.query("SELECT count(*) AS n FROM t").int64(0, "n") == 0)
        let value = try c.transaction { _ in 42 }
        #expect(value == 42)
        #expect(!c.inTransaction)
        // Outside a transaction a deferred statement runs at once.
        try c.deferUntilCommit("INSERT INTO t VALUES ($1)", [.int(5)])
        #expect(try c.query("SELECT count(*) AS n FROM t").int64(0, "n") == 1)
    }

    @Test("binary array parameters arrive as the values they hold, NULLs included")
    func binaryArrays() throws {
        let c = try TestDatabase.create("binaryarray").connect()
        var texts = BinaryArray(.text), smalls = BinaryArray(.int16), ints = BinaryArray(.int32)
        var bigs = BinaryArray(.int64), flags = BinaryArray(.bool), times = BinaryArray(.timestamptz)
        var docs = BinaryArray(.jsonb)
        let when = Timestamp(microseconds: 1_796_083_200_123_456)
        texts.append(text: "a\"b\\c é"); texts.append(text: nil)
        smalls.append(Int64(-3)); smalls.append(nil as Int64?)
        ints.append(Int64(70_000)); ints.append(nil as Int64?)
        bigs.append(Int64.max); bigs.append(nil as Int64?)
        flags.append(true); flags.append(nil as Bool?)
        times.append(when); times.append(nil as Timestamp?)
        docs.append(utf8: Array(#"{"b": [1, 2.50], "a": null}"#.utf8)); docs.append(utf8: nil)
        let rows = try c.query("""
            SELECT t, s, i, b, f, ledger_micros, d::text AS d
              FROM unnest($1::text[], $2::smallint[], $3::integer[], $4::bigint[], $5::boolean[],
                          $6::timestamptz[], $7::jsonb[]) AS r(t, s, i, b, f, w, d),
                   LATERAL (SELECT (extract(epoch FROM w) * 1000000)::bigint AS ledger_micros) m
            """, [texts.parameter, smalls.parameter, ints.parameter, bigs.parameter, flags.parameter,
                  times.parameter, docs.parameter], prepared: true)
        #expect(rows.count == 2)
        #expect(try rows.string(0, "t") == "a\"b\\c é")
        #expect(try rows.int64(0, "s") == -3 && rows.int64(0, "i") == 70_000 && rows.int64(0, "b") == Int64.max)
        #expect(try rows.string(0, "f") == "t")
        #expect(try rows.int64(0, "ledger_micros") == when.microseconds)
        #expect(try rows.string(0, "d") == #"{"a": null, "b": [1, 2.50]}"#)
        for column in ["t", "s", "i", "b", "f", "ledger_micros", "d"] {
            #expect(try rows.value(1, column) == nil, "row 2's \(column) is NULL")
        }
    }
}
