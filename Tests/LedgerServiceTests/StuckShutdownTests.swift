import Foundation
import LedgerAPI
import LedgerCore
import LedgerPostgres
import LedgerService
import LedgerTestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// A graceful stop that cannot finish (a commit waits on a row lock nobody
/// releases) is bounded: by LEDGER_SHUTDOWN_TIMEOUT, or at once by a second
/// signal. The stuck webhook was never acknowledged, and nothing of it is stored.
@Suite("A stuck shutdown")
struct StuckShutdownTests {
    /// `ledger serve` with order STUCK-1's row locked by another session and a webhook for
    /// it stuck in the writer's commit.
    final class StuckServer: @unchecked Sendable {
        // @unchecked: set once in init; `reply` is guarded by its own lock.
        let db: TestDatabase
        let server: ServeProcess
        let holder: PostgresConnection
        let reply = Locked<Int?>(nil)

        init(_ name: String, environment: [String: String] = [:]) throws {
            db = try TestDatabase.create(name)
            server = try ServeProcess(databaseURL: db.url, environment: environment)
            guard server.waitUntilServing(within: 20) else { throw ClientError.malformed("ledger serve did not come up: \(server.logText)") }
            let first = LedgerFixture.web3Body("STUCK-1", status: 2)
            let created = try HTTPClient(port: server.port).post("/v1/webhooks/web3", body: first,
                                                                  headers: LedgerFixture.web3Headers(first, timestamp: String(Timestamp.now().seconds)))
            guard created.status == 201 || created.status == 200 else { throw ClientError.malformed("first webhook: \(created)") }
            holder = try db.connect()
            try holder.query("BEGIN")
            try holder.query("SELECT 1 FROM ledger.orders WHERE merchant_order_no = 'STUCK-1' FOR UPDATE")
            let port = server.port
            Thread { [reply] in
                let body = LedgerFixture.web3Body("STUCK-1", status: 3)
                let answer = try? HTTPClient(port: port, timeout: 60).post(
                    "/v1/webhooks/web3", body: body, headers: LedgerFixture.web3Headers(body, timestamp: String(Timestamp.now().seconds)))
                reply.with { $0 = answer?.status ?? 0 }
            }.start()
            let watcher = try db.connect()
            defer { watcher.close() }
            guard eventually(within: 10, every: 0.02, {
                try watcher.query("""
                    SELECT count(*) AS n FROM pg_stat_activity
                     WHERE datname = current_database() AND wait_event_type = 'Lock'
                    """).int64(0, "n") > 0
            }) else { throw ClientError.malformed("the second webhook never reached its commit") }
        }

        /// Releases the lock once the server is gone, waits for its sessions to end, and
        /// answers how many events order STUCK-1's stream holds.
        func storedEventsAfterRelease() throws -> Int64 {
            try holder.query("COMMIT")
            let c = try db.connect()
            defer { c.close() }
            _ = eventually(within: 10, every: 0.05) {
                try c.query("""
                    SELECT count(*) AS n FROM pg_stat_activity
                     WHERE datname = current_database() AND pid <> pg_backend_pid() AND backend_type = 'client backend'
                       AND pid <> \(try holder.query("SELECT pg_backend_pid() AS p").int64(0, "p"))
                    """).int64(0, "n") == 0
            }
            return try c.query("SELECT count(*) AS n FROM ledger.events WHERE stream = 'order-STUCK-1'").int64(0, "n")
        }

        deinit {
            holder.close()
            LedgerFixture.drop(db)
        }
    }

    @Test("past LEDGER_SHUTDOWN_TIMEOUT the process exits 1 and says why; the unacknowledged webhook is not stored")
    func timeout() throws {
        let stuck = try StuckServer("stuck_timeout", environment: ["LEDGER_SHUTDOWN_TIMEOUT": "3"])
        let started = Date()
        let status = stuck.server.signal(SIGTERM, waitSeconds: 15)
        let waited = Date().timeIntervalSince(started)
        #expect(status != nil, "ledger serve did not exit within 15 s of SIGTERM with a 3 s shutdown timeout")
        if let status { #expect(status & 0x7f == 0 && (status >> 8) & 0xff == 1, "exit status \(status)") }
        #expect(waited >= 2.5, "exited after \(waited) s, before the timeout: the stop was not stuck")
        #expect(stuck.server.logText.contains("did not finish within LEDGER_SHUTDOWN_TIMEOUT"), "\(stuck.server.logText.suffix(1500))")
        #expect(eventually(within: 5, every: 0.05) { stuck.reply.snapshot != nil })
        #expect(stuck.reply.snapshot != 200 && stuck.reply.snapshot != 201, "the stuck webhook was acknowledged: \(String(describing: stuck.reply.snapshot))")
        #expect(try stuck.storedEventsAfterRelease() == 1, "only the first webhook's event is stored")
    }

    @Test("a second SIGTERM during a stuck stop ends the process at once, with status 1")
    func secondSignal() throws {
        let stuck = try StuckServer("stuck_second")
        kill(stuck.server.pid, SIGTERM)
        usleep(1_500_000)
        #expect(!stuck.server.hasExited, "the stop finished although a commit is stuck behind a lock")
        let started = Date()
        let status = stuck.server.signal(SIGTERM, waitSeconds: 10)
        #expect(status != nil, "ledger serve did not exit within 10 s of the second SIGTERM")
        if let status { #expect(status & 0x7f == 0 && (status >> 8) & 0xff == 1, "exit status \(status)") }
        #expect(Date().timeIntervalSince(started) < 3, "the second signal did not end the process at once")
        #expect(stuck.server.logText.contains("second signal"), "\(stuck.server.logText.suffix(1500))")
        #expect(try stuck.storedEventsAfterRelease() == 1, "only the first webhook's event is stored")
    }

    @Test("LEDGER_SHUTDOWN_TIMEOUT: 25 s by default, 1 to 3600, anything else a configuration error")
    func setting() throws {
        let base = LedgerFixture.environment(databaseURL: "postgresql://localhost/x")
        #expect(try LedgerConfiguration.fromEnvironment(base).shutdownTimeoutSeconds == 25)
        #expect(try LedgerConfiguration.fromEnvironment(base.merging(["LEDGER_SHUTDOWN_TIMEOUT": "90"]) { $1 }).shutdownTimeoutSeconds == 90)
        for bad in ["0", "3601", "ten"] {
            #expect(throws: ConfigurationError.self) {
                try LedgerConfiguration.fromEnvironment(base.merging(["LEDGER_SHUTDOWN_TIMEOUT": bad]) { $1 })
            }
        }
    }
}
