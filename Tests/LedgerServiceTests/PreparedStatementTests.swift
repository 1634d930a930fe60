import Foundation
import LedgerCore
import LedgerPostgres
@testable import LedgerService
import LedgerTestSupport
import Synchronization
import Testing

/// Prepared statements live with their server session; the connection must notice
/// when that session is gone and prepare again.
@Suite("Prepared statements")
struct PreparedStatementTests {
    @Test("a prepared statement is prepared once, and again after a reconnect, a DISCARD ALL or a rolled-back transaction")
    func preparedSurvivesReconnect() throws {
        let db = try TestDatabase.create("prepared")
        defer { LedgerFixture.drop(db) }
        let c = try PostgresConnection(connectionString: db.url)
        defer { c.close() }
        let sql = "SELECT $1::int + 1 AS n, pg_backend_pid() AS pid"
        let first = try c.query(sql, [1], prepared: true)
        #expect(try first.int64(0, "n") == 2)
        #expect(try c.query(sql, [2], prepared: true).int64(0, "n") == 3)
        #expect(c.preparedStatementCount == 1)
        let row = try #require(try c.firstRow(sql, [41], prepared: true))
        #expect(row.first == Array("42".utf8))

        // The server ends the session: the next use may fail, the one after reconnects and prepares again.
        let admin = try PostgresConnection(connectionString: db.url)
        defer { admin.close() }
        try admin.query("SELECT pg_terminate_backend($1::int)", [.text(try first.string(0, "pid"))])
        _ = try? c.query(sql, [3], prepared: true)
        let after = try c.query(sql, [4], prepared: true)
        #expect(try after.int64(0, "n") == 5)
        #expect(try after.string(0, "pid") != (try first.string(0, "pid")))
        #expect(c.preparedStatementCount == 1)

        // The session forgets its statements behind our back.
        _ = try c.query("DISCARD ALL")
        #expect(try c.query(sql, [5], prepared: true).int64(0, "n") == 6)

        // Prepared inside a transaction that rolls back.
        let other = "SELECT $1::text || 'x' AS t"
        _ = try? c.transaction { c -> Int in
            _ = try c.query(other, ["a"], prepared: true)
            throw PostgresError.unexpectedResult("roll back")
        }
        #expect(try c.query(other, ["b"], prepared: true).string(0, "t") == "bx")
        #expect(try c.firstRow("SELECT 1 WHERE false", prepared: true) == nil)
        #expect(try c.firstRow("SELECT NULL::text, ''::text") == [nil, []])
    }

    @Test("with a statement timeout, a server that stops answering is given up on the client side too")
    func frozenServerIsGivenUp() throws {
        let db = try TestDatabase.create("frozen")
        defer { LedgerFixture.drop(db) }
        let pool = ConnectionPool(configuration: DatabaseConfiguration(connectionString: db.url, poolSize: 1,
                                                                       statementTimeoutSeconds: 0.5))
        defer { pool.close() }
        let sql = "SELECT pg_backend_pid() AS pid"
        let pid = try pool.withConnection { try $0.query(sql, [], prepared: true).int64(0, "pid") }
        // A stopped backend neither answers nor lets its statement timeout fire.
        guard kill(pid_t(pid), SIGSTOP) == 0 else {
            Issue.record("cannot stop backend \(pid) (the tests run as a user who may not signal it)")
            return
        }
        defer { kill(pid_t(pid), SIGCONT) }
        let started = Date()
        #expect(throws: PostgresError.self) { try pool.withConnection { try $0.query(sql, [], prepared: true) } }
        let waited = Date().timeIntervalSince(started)
        #expect(waited >= 2 && waited < 5, "gave up after \(waited) s")
        kill(pid_t(pid), SIGCONT)
        // The pool dropped that session; the next read gets a new one.
        let next = try pool.withConnection { try $0.query(sql, [], prepared: true).int64(0, "pid") }
        #expect(next != pid)
    }

    @Test("a pool with a statement timeout cancels a statement that runs longer")
    func statementTimeout() throws {
        let db = try TestDatabase.create("stmt_timeout")
        defer { LedgerFixture.drop(db) }
        let pool = ConnectionPool(configuration: DatabaseConfiguration(connectionString: db.url, poolSize: 1,
                                                                       statementTimeoutSeconds: 0.2))
        defer { pool.close() }
        let started = Date()
        #expect(throws: PostgresError.self) { try pool.withConnection { try $0.query("SELECT pg_sleep(5)") } }
        #expect(Date().timeIntervalSince(started) < 3)
        // A cancelled statement is the database being slow or locked now: 503 with Retry-After, not 500.
        do {
            try pool.withConnection { _ = try $0.query("SELECT pg_sleep(5)") }
            Issue.record("the statement was not cancelled")
        } catch let error as PostgresError {
            #expect(error.sqlState == "57014" && error.isUnavailable, "\(error)")
        }
        #expect(try pool.withConnection { try $0.query("SELECT 1 AS n").int64(0, "n") } == 1)
    }
}
