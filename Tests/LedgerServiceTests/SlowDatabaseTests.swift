import Foundation
import LedgerCore
import LedgerPostgres
import LedgerTestSupport
import Synchronization
import Testing

@Suite("A database that answers too slowly")
struct SlowDatabaseTests {
    @Test("a write stuck behind a lock answers 503 with Retry-After at the request timeout, never hangs, and its retry is stored once")
    func stuckWriteTimesOut() throws {
        let ledger = try LedgerFixture.start("slow") { $0.requestTimeoutSeconds = 2 }
        defer { ledger.stop() }
        #expect(try ledger.register("SL-1").status == 201)
        let holder = try ledger.connect()
        defer { holder.close() }
        try holder.query("BEGIN")
        try holder.query("SELECT 1 FROM ledger.orders WHERE merchant_order_no = 'SL-1' FOR UPDATE")

        let body = LedgerFixture.web3Body("SL-1", status: 3)
        let started = Date()
        let stuck = try ledger.sendWeb3(body)
        let seconds = Date().timeIntervalSince(started)
        #expect(stuck.status == 503, "\(stuck)")
        #expect(stuck.header("Retry-After") != nil, "\(stuck.headers)")
        #expect(stuck.isProblem, "\(stuck)")
        #expect(seconds < 5, "answered after \(seconds) s with a 2 s request timeout")

        try holder.query("COMMIT")
        var last: Reply?
        #expect(eventually(within: 15, every: 0.25) {
            last = try ledger.sendWeb3(body)
            return last?.status == 200
        }, "the retry never succeeded: \(last.map(String.init(describing:)) ?? "-")")
        #expect(try ledger.storedCount(web3Body: body) == 1)
        #expect(try ledger.order("SL-1")["status"]?.int64Value == 3)
    }

    @Test("with every worker stuck on a slow commit, queued requests (and deferred webhooks) still get 503 with Retry-After within the request timeout")
    func saturatedWorkers() throws {
        let ledger = try LedgerFixture.start("saturated") {
            $0.requestTimeoutSeconds = 2
            $0.workerThreads = 2
        }
        defer { ledger.stop() }
        #expect(try ledger.register("SL-2").status == 201)
        let holder = try ledger.connect()
        defer { holder.close() }
        try holder.query("BEGIN")
        try holder.query("SELECT 1 FROM ledger.orders WHERE merchant_order_no = 'SL-2' FOR UPDATE")

        // Query observations run on the workers (2 here), so 4 of the 6 wait in the queue
        // behind the 2 that wait on the lock; signed webhooks take the deferred path and
        // hold no worker at all. Both kinds must be answered 503 in time.
        let answers = Locked([(status: Int, seconds: Double, retryAfter: Bool)]())
        onThreads(8) { i in
            let started = Date()
            let reply: Reply?
            if i < 6 {
                let body = #"{"provider":"web3","response":{"code":0,"status":2,"statusText":"confirming"},"observedAt":"2026-11-01T12:00:0\#(i)Z"}"#
                reply = try? ledger.client.post("/v1/orders/SL-2/observations", token: ledger.ingest, json: body)
            } else {
                reply = try? ledger.sendWeb3(LedgerFixture.web3Body("SL-2", status: 2, extra: #","seq":\#(i)"#))
            }
            answers.with { $0.append((reply?.status ?? 0, Date().timeIntervalSince(started), reply?.header("Retry-After") != nil)) }
        }
        try holder.query("COMMIT")
        let all = answers.snapshot
        #expect(all.count == 8)
        #expect(all.allSatisfy { $0.status == 503 && $0.retryAfter }, "\(all)")
        #expect(all.allSatisfy { $0.seconds < 5 }, "a 2 s request timeout, yet answers took \(all.map(\.seconds))")
    }
}
