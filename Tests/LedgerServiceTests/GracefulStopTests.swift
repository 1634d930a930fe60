import Foundation
import LedgerCore
import LedgerPostgres
import LedgerTestSupport
import Testing

/// issue 4, Faults: stopping finishes requests in flight and flushes the
/// commits they wait for. A row lock holds one webhook inside its commit
/// while the service is told to stop.
@Suite("Graceful stop")
struct GracefulStopTests {
    /// A service with one webhook for GS-1 blocked in its commit by a row lock, and stop() called.
    final class StoppingService: @unchecked Sendable {
        // @unchecked: the semaphores and Locked are thread-safe; the rest is set once in init.
        let ledger: LedgerFixture
        let holder: PostgresConnection
        let body = LedgerFixture.web3Body("GS-1", status: 3)
        let answer = Locked<Result<Reply, Error>?>(nil)
        let requestDone = DispatchSemaphore(value: 0)
        let stopped = DispatchSemaphore(value: 0)
        private var committed = false

        init() throws {
            ledger = try LedgerFixture.start("graceful")
            guard try ledger.register("GS-1").status == 201 else { throw ClientError.malformed("register GS-1") }
            holder = try ledger.connect()
            try holder.query("BEGIN")
            try holder.query("SELECT 1 FROM ledger.orders WHERE merchant_order_no = 'GS-1' FOR UPDATE")
            Thread { [self] in
                answer.with { $0 = Result { try ledger.sendWeb3(body) } }
                requestDone.signal()
            }.start()
            // Wait until the webhook's transaction is blocked on the lock: it is in flight.
            let watcher = try ledger.connect()
            defer { watcher.close() }
            let blocked = eventually(within: 10, every: 0.02) {
                try watcher.query("""
                    SELECT count(*) AS n FROM pg_stat_activity
                     WHERE datname = current_database() AND wait_event_type = 'Lock'
                    """).int64(0, "n") > 0
            }
            guard blocked else { throw ClientError.malformed("the webhook never reached its commit") }
            Thread { [self] in
                ledger.stop()
                stopped.signal()
            }.start()
        }

        func release() throws {
            guard !committed else { return }
            committed = true
            try holder.query("COMMIT")
        }

        deinit {
            try? release()
            _ = stopped.wait(timeout: .now() + 20)
            holder.close()
        }
    }

    @Test("stop() waits for a request in flight, which finishes with its answer and its commit")
    func requestInFlightFinishes() throws {
        let s = try StoppingService()
        #expect(s.stopped.wait(timeout: .now() + 0.7) == .timedOut, "stop() returned while a request was still in flight")
        #expect(s.requestDone.wait(timeout: .now()) == .timedOut)

        try s.release()
        #expect(s.requestDone.wait(timeout: .now() + 10) == .success, "the request in flight never got its answer")
        #expect(s.stopped.wait(timeout: .now() + 15) == .success, "stop() did not return after the last request finished")
        s.stopped.signal()   // for deinit
        switch s.answer.snapshot {
        case .success(let reply)?:
            #expect(reply.status == 200, "the request in flight is answered, not cut off: \(reply)")
            #expect(reply["duplicate"]?.boolValue == false)
        case .failure(let error)?:
            Issue.record("the request in flight got no answer: \(error)")
        case nil:
            Issue.record("no answer recorded")
        }
        #expect(try s.ledger.storedCount(web3Body: s.body) == 1, "its event was committed")
        #expect(try s.ledger.query("SELECT status FROM ledger.orders WHERE merchant_order_no = 'GS-1'").int64(0, "status") == 3)
    }

    @Test("while stopping, a new connection is refused (or answered 503 at once) rather than left waiting for the grace period")
    func newConnectionsWhileStopping() throws {
        let s = try StoppingService()
        Thread.sleep(forTimeInterval: 0.3)   // stop() has begun: it waits for the blocked request
        #expect(s.stopped.wait(timeout: .now()) == .timedOut)
        let started = Date()
        do {
            let reply = try HTTPClient(port: s.ledger.port, timeout: 2).get("/healthz")
            #expect(reply.status == 503, "a stopping server answered a new request with \(reply)")
        } catch ClientError.io(let what) where what.hasPrefix("connect") {
            // Refused: what a load balancer needs to fail over at once.
        } catch {
            Issue.record("""
                a new connection during shutdown was accepted by the kernel but got no answer in \
                \(String(format: "%.1f", Date().timeIntervalSince(started))) s (\(error)): the listening socket stays open after quiesce
                """)
        }
        try s.release()
    }
}
