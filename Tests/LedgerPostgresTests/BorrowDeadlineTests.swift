import Foundation
import LedgerCore
import LedgerPostgres
import LedgerTestSupport
import Testing

@Suite("A borrow bounded in time")
struct BorrowDeadlineTests {
    @Test("withConnection(within:) gives up on an answer at its deadline, as unavailable; the pool then works, and the next borrow has no deadline")
    func borrowDeadline() throws {
        let db = try TestDatabase.create("borrow_deadline")
        let pool = ConnectionPool(configuration: DatabaseConfiguration(connectionString: db.url, poolSize: 1))
        defer { pool.close() }
        let started = Date()
        do {
            try pool.withConnection(within: 1) { _ = try $0.query("SELECT pg_sleep(10)") }
            Issue.record("a 10 s statement finished inside a 1 s borrow")
        } catch let error as PostgresError {
            #expect(error.isUnavailable, "\(error)")
        }
        let waited = Date().timeIntervalSince(started)
        #expect(waited >= 0.9 && waited < 3, "gave up after \(waited) s")
        // The one connection was dropped and is replaced; a borrow without a budget may take longer than 1 s.
        let slept = try pool.withConnection { try $0.query("SELECT pg_sleep(1.5), 7 AS n").int64(0, "n") }
        #expect(slept == 7)
    }

    @Test("a configured borrowTimeoutSeconds bounds every borrow of that pool")
    func configuredBudget() throws {
        let db = try TestDatabase.create("borrow_budget")
        let pool = ConnectionPool(configuration: DatabaseConfiguration(connectionString: db.url, poolSize: 1, borrowTimeoutSeconds: 1))
        defer { pool.close() }
        let started = Date()
        #expect(throws: PostgresError.self) { try pool.withConnection { _ = try $0.query("SELECT pg_sleep(10)") } }
        #expect(Date().timeIntervalSince(started) < 3)
        #expect(try pool.withConnection { try $0.query("SELECT 1 AS n").int64(0, "n") } == 1)
    }

    @Test("connecting, too, ends at the borrow's deadline, against a host that accepts and never answers")
    func connectDeadline() throws {
        let db = try TestDatabase.create("borrow_connect")
        let upstream = try #require(URLComponents(string: db.url)?.port, "the test database's URL has no port: \(db.url)")
        let proxy = try BlackholeProxy(upstreamPort: upstream)
        defer { proxy.stop() }
        proxy.blackhole()
        let pool = ConnectionPool(configuration: DatabaseConfiguration(connectionString: proxy.rewrite(db.url), poolSize: 1,
                                                                       connectTimeoutSeconds: 10))
        defer { pool.close() }
        let started = Date()
        #expect(throws: PostgresError.self) { try pool.withConnection(within: 0.5) { _ = try $0.query("SELECT 1") } }
        let waited = Date().timeIntervalSince(started)
        #expect(waited >= 0.4 && waited < 1.2, "gave up after \(waited) s with a 0.5 s budget (libpq alone would wait at least 2 s)")
    }
}
