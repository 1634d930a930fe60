import Foundation
import LedgerCore
@testable import LedgerPostgres
import LedgerTestSupport
import Synchronization
import Testing

/// The single writer sends a batch's COMMIT together with BEGIN and the next
/// batch's first statement (ledger.append_prepare): what commits, and what is
/// left open, must be exactly what the caller is told.
@Suite("A commit that begins the next transaction")
struct CommitBeginsNextTests {
    /// Whether `pid`'s session is inside a transaction, as another session sees it.
    func inTransaction(_ pid: Int64, seenFrom other: PostgresConnection) throws -> Bool {
        try other.query("SELECT state FROM pg_stat_activity WHERE pid = $1", [.int(pid)]).string(0, "state") != "idle"
    }

    @Test("the next statement's answer comes back with the commit; the connection is then inside its transaction, which commits when continued")
    func continues() throws {
        let db = try TestDatabase.create("beginsnext")
        let c = try db.connect(), other = try db.connect()
        try c.query("CREATE TABLE t (n integer PRIMARY KEY)")
        let pid = try c.query("SELECT pg_backend_pid() AS p").int64(0, "p")
        let (_, answer) = try c.transaction(continuing: false, { c in
            try c.query("INSERT INTO t VALUES (1)")
        }, next: { PipelinedStatement(sql: "SELECT count(*) AS n, pg_advisory_xact_lock(99) IS NULL AS locked FROM t",
                                      parameters: [], prepared: false) })
        #expect(try answer?.int64(0, "n") == 1, "the next transaction sees what the commit kept")
        #expect(c.inTransaction)
        #expect(try inTransaction(pid, seenFrom: other))
        #expect(try count("SELECT count(*) AS n FROM t", on: other) == 1, "row 1 is committed, not waiting for the next transaction")
        #expect(try count("SELECT count(*) AS n FROM pg_locks WHERE locktype = 'advisory' AND pid = $1", on: other, [.int(pid)]) == 1)

        let (_, none) = try c.transaction(continuing: true, { c in
            try c.query("INSERT INTO t VALUES (2)")
        }, next: { nil })
        #expect(none == nil)
        #expect(!c.inTransaction)
        #expect(try !inTransaction(pid, seenFrom: other))
        #expect(try count("SELECT count(*) AS n FROM t", on: other) == 2)
        #expect(try count("SELECT count(*) AS n FROM pg_locks WHERE locktype = 'advisory' AND pid = $1", on: other, [.int(pid)]) == 0,
                "the lock the next transaction took ends with it")
    }

    @Test("a commit that fails throws, and the next transaction never began: nothing kept, nothing open")
    func failedCommitBeginsNothing() throws {
        let db = try TestDatabase.create("beginsnextfail")
        let c = try db.connect(), other = try db.connect()
        try c.query("CREATE TABLE t (n integer PRIMARY KEY)")
        let pid = try c.query("SELECT pg_backend_pid() AS p").int64(0, "p")
        var asked = false
        #expect(throws: PostgresError.self) {
            _ = try c.transaction(continuing: false, { c in
                try c.query("INSERT INTO t VALUES (1)")
                try c.deferUntilCommit("SELECT 1 / 0", [])   // fails in the COMMIT's round trip
            }, next: {
                asked = true
                return PipelinedStatement(sql: "INSERT INTO t VALUES (2)", parameters: [], prepared: false)
            })
        }
        #expect(asked, "the next statement was sent with the failing commit")
        #expect(!c.inTransaction)
        #expect(try !inTransaction(pid, seenFrom: other))
        #expect(try count("SELECT count(*) AS n FROM t", on: other) == 0)
        try c.query("INSERT INTO t VALUES (3)")   // the session is usable
        #expect(try count("SELECT count(*) AS n FROM t", on: other) == 1)
    }

    @Test("a next statement that fails leaves the commit kept and its own transaction rolled back")
    func failedNextKeepsCommit() throws {
        let db = try TestDatabase.create("beginsnextbad")
        let c = try db.connect(), other = try db.connect()
        try c.query("CREATE TABLE t (n integer PRIMARY KEY)")
        let pid = try c.query("SELECT pg_backend_pid() AS p").int64(0, "p")
        let (_, answer) = try c.transaction(continuing: false, { c in
            try c.query("INSERT INTO t VALUES (1)")
        }, next: { PipelinedStatement(sql: "SELECT 1 / 0 AS n", parameters: [], prepared: false) })
        #expect(answer == nil)
        #expect(!c.inTransaction)
        #expect(try !inTransaction(pid, seenFrom: other))
        #expect(try count("SELECT count(*) AS n FROM t", on: other) == 1)
    }

    @Test("under concurrent load batches begin the next one in their COMMIT; every event is stored once and the chain verifies")
    func groupCommitPipelines() throws {
        let db = try TestDatabase.create("beginsnextload")
        let pool = db.pool(size: 2)
        let committer = GroupCommitter(pool: pool, maxBatch: 20)
        defer { pool.close() }
        let failures = Atomic<Int>(0)
        let threads = 16, perThread = 60
        DispatchQueue.concurrentPerform(iterations: threads) { t in
            for i in 0..<perThread {
                // Streams shared across threads: the next batch's versions rest on the claims.
                let event = sampleEvent(key: "k-\(t)-\(i)", stream: "order-\(i % 7)")
                if (try? committer.append([event])) == nil { failures.add(1, ordering: .relaxed) }
            }
        }
        committer.shutdown()
        #expect(failures.load(ordering: .relaxed) == 0)
        let stats = committer.stats
        #expect(stats.prefetchedBatches > 0, "no COMMIT began the next batch: \(stats)")
        let c = try db.connect()
        #expect(try count("SELECT count(DISTINCT idempotency_key) AS n FROM ledger.events", on: c) == Int64(threads * perThread))
        #expect(try ChainVerifier().verify(on: c) == .intact(events: Int64(threads * perThread), head: Int64(threads * perThread)))
        // Stream versions are gapless 1...n per stream.
        #expect(try count("""
            SELECT count(*) AS n FROM (SELECT stream, max(stream_version) AS v, count(*) AS c FROM ledger.events GROUP BY stream) s
             WHERE v <> c
            """, on: c) == 0)
    }

    @Test("a batch whose COMMIT fails after the next batch was taken: the next one still commits, on its own")
    func nextSurvivesFailedCommit() async throws {
        let db = try TestDatabase.create("beginsnextcarry")
        let pool = db.pool(size: 2)
        let committer = GroupCommitter(pool: pool, projector: FailAtCommitProjector())
        defer { committer.shutdown(); pool.close() }
        async let poisoned: Bool = {
            do { _ = try await committer.append([sampleEvent(key: "bad", stream: "order-FAILCOMMIT")]); return true }
            catch { return false }
        }()
        try await Task.sleep(for: .milliseconds(100))   // the writer now holds the failing batch
        let results = await withTaskGroup(of: (String, Bool).self) { group in
            for key in ["n1", "n2", "n3"] {
                group.addTask {
                    do { _ = try await committer.append([sampleEvent(key: key, stream: "order-OK")]); return (key, true) }
                    catch { return (key, false) }
                }
            }
            var all: [String: Bool] = [:]
            for await (key, ok) in group { all[key] = ok }
            return all
        }
        #expect(await poisoned == false)
        #expect(results == ["n1": true, "n2": true, "n3": true])
        let c = try db.connect()
        #expect(try ChainVerifier().verify(on: c) == .intact(events: 3, head: 3))
    }
}

/// Holds a batch for the failing stream long enough for others to queue, then makes
/// its COMMIT fail (a statement deferred to the COMMIT's round trip).
struct FailAtCommitProjector: BatchProjector {
    func project(_ appended: [Item], prepared: (any Sendable)?, on connection: PostgresConnection) throws {
        guard appended.contains(where: { $0.event.stream == "order-FAILCOMMIT" }) else { return }
        Thread.sleep(forTimeInterval: 0.4)
        try connection.deferUntilCommit("SELECT 1 / 0", [])
    }
}
