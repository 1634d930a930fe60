import Foundation
import LedgerCore
import LedgerPostgres
import LedgerTestSupport
import Synchronization
import Testing

/// http-api.md, Durability: when the database cannot be reached the answer is
/// 503 with Retry-After, never a 2xx and never a hang; the service recovers by
/// itself. Runs on a private cluster so stopping it disturbs no other suite.
@Suite("PostgreSQL stopped and restarted under a running service")
struct DatabaseOutageTests {
    /// Runs `request`, expecting a 503 problem with Retry-After well within the request timeout.
    private func expectUnavailable(_ what: String, _ request: () throws -> Reply) {
        let started = Date()
        do {
            let reply = try request()
            let seconds = Date().timeIntervalSince(started)
            #expect(reply.status == 503, "\(what) while PostgreSQL is down: \(reply)")
            #expect(reply.header("Retry-After").flatMap { Int($0) } != nil, "\(what): Retry-After missing in \(reply.headers)")
            #expect(reply.isProblem, "\(what): \(reply)")
            #expect(seconds < 10, "\(what) took \(seconds) s")
        } catch {
            Issue.record("\(what) while PostgreSQL is down got no HTTP answer after \(Date().timeIntervalSince(started)) s: \(error)")
        }
    }

    /// Every route of http-api.md that needs the database, beyond the ones above (exports
    /// are not served yet), with a well-formed request: each must answer 503 too.
    private static func everyOtherRoute(_ ledger: LedgerFixture, clientToken: String) -> [(String, () throws -> Reply)] {
        let callback = #"{"provider":"banxa","callback":"banxaDidDismiss","payload":{},"clientEventId":"2b7c2a4e-3f1d-4c8a-9e2b-5d6f7a8b9c0d"}"#
        let enrollment = #"{"provider":"bankpay","callback":"onSuccess","payload":{"type":"close"},"clientEventId":"3b7c2a4e-3f1d-4c8a-9e2b-5d6f7a8b9c0d"}"#
        let banxa = Array(#"{"order_id":"bx-DB-1","status":"complete","external_id":"DB-1","crypto_coin":"USDT","crypto_amount":"40"}"#.utf8)
        let nonce = String(Timestamp.now().microseconds / 1000)
        let authorization = "Bearer \(LedgerFixture.banxaAPIKey):\(BanxaWebhook.signature(secret: LedgerFixture.banxaSecret, nonce: nonce, body: banxa)):\(nonce)"
        return [
            ("a Banxa webhook", { try ledger.client.post("/v1/webhooks/banxa", body: banxa, headers: [("Authorization", authorization)]) }),
            ("a query observation", { try ledger.client.post("/v1/orders/DB-1/observations", token: ledger.ingest,
                                                             json: #"{"provider":"acmepay","response":{"status":3}}"#) }),
            ("a client event (ingest)", { try ledger.client.post("/v1/orders/DB-1/client-events", token: ledger.ingest, json: callback) }),
            ("a client event (client token)", { try ledger.client.post("/v1/orders/DB-1/client-events", token: clientToken, json: callback) }),
            ("an enrollment callback", { try ledger.client.post("/v1/enrollments/DB-1/client-events", token: ledger.ingest, json: enrollment) }),
            ("a client token", { try ledger.client.post("/v1/orders/DB-1/client-tokens", token: ledger.ingest, json: "{}") }),
            ("a correction", { try ledger.client.post("/v1/orders/DB-1/corrections", token: ledger.auditor,
                                                      json: #"{"status":5,"reason":"outage test"}"#) }),
            ("the list", { try ledger.client.get("/v1/orders", token: ledger.support) }),
            ("a timeline", { try ledger.client.get("/v1/orders/DB-1/events", token: ledger.support) }),
            ("the ledger head", { try ledger.client.get("/v1/ledger/head", token: ledger.auditor) }),
        ]
    }

    @Test("with PostgreSQL stopped, writes and reads get 503 with Retry-After in time and readyz is 503; after a restart everything works again")
    func outageAndRecovery() throws {
        let cluster = try ScratchCluster()
        defer { cluster.destroy() }
        let admin = try PostgresConnection(connectionString: cluster.url)
        _ = try Migrator(migrations: Migration.load(from: TestDatabase.migrationsDirectory)).migrate(admin)
        admin.close()
        let ledger = try LedgerFixture(databaseURL: cluster.url, migrator: Migrator(migrations: Migration.load(from: TestDatabase.migrationsDirectory))) {
            $0.requestTimeoutSeconds = 9
        }
        defer { ledger.stop() }

        #expect(try ledger.register("DB-1").status == 201)
        #expect(try ledger.sendWeb3(LedgerFixture.web3Body("DB-1", status: 2)).status == 200)
        #expect(try ledger.order("DB-1").status == 200)   // the support token is now cached
        let uncached = try ledger.token(.auditor)
        let clientToken = try ledger.token(.client, orderNo: "DB-1")

        try cluster.stop()
        let paid = LedgerFixture.web3Body("DB-1", status: 3)
        expectUnavailable("a read with a cached token") { try ledger.order("DB-1") }
        expectUnavailable("a read whose token must be looked up") { try ledger.order("DB-1", token: uncached) }
        expectUnavailable("a webhook") { try ledger.sendWeb3(paid) }
        expectUnavailable("a registration") { try ledger.register("DB-2") }
        expectUnavailable("readyz") { try ledger.client.get("/readyz") }
        #expect(try ledger.client.get("/healthz").status == 200, "the process is still up")
        for (what, route) in Self.everyOtherRoute(ledger, clientToken: clientToken) {
            expectUnavailable(what, route)
        }
        #expect(try ledger.client.get("/metrics").status == 200, "metrics need no database")

        try cluster.start()
        var last: Reply?
        let recovered = eventually(within: 15, every: 0.25) {
            last = try ledger.sendWeb3(paid)
            return last?.status == 200
        }
        #expect(recovered, "the webhook still fails 15 s after PostgreSQL returned: \(last.map(String.init(describing:)) ?? "no answer")")
        let order = try ledger.order("DB-1", token: uncached)
        #expect(order.status == 200, "\(order)")
        #expect(order["status"]?.int64Value == 3)
        #expect(try ledger.register("DB-2").status == 201)
        #expect(try ledger.client.get("/readyz").status == 200)
        #expect(try ledger.storedCount(web3Body: paid) == 1)
        for (what, route) in Self.everyOtherRoute(ledger, clientToken: clientToken) {
            let reply = try route()
            #expect(reply.status == 200 || reply.status == 201, "\(what) after the restart: \(reply)")
        }
    }

    @Test("PostgreSQL stopped in the middle of a webhook load: every request is answered in time, and every 200 is stored once after the restart")
    func outageUnderLoad() throws {
        let cluster = try ScratchCluster()
        defer { cluster.destroy() }
        let admin = try PostgresConnection(connectionString: cluster.url)
        _ = try Migrator(migrations: Migration.load(from: TestDatabase.migrationsDirectory)).migrate(admin)
        admin.close()
        let ledger = try LedgerFixture(databaseURL: cluster.url, poolSize: 6) { $0.requestTimeoutSeconds = 9 }
        defer { ledger.stop() }

        let acknowledged = Locked([[UInt8]]())
        let slow = Locked([String]())
        let answered = Locked([Int: Int]())
        let odd = Locked([String]())
        let stop = Atomic<Bool>(false)
        let group = DispatchGroup()
        for t in 0..<6 {
            group.enter()
            Thread {
                defer { group.leave() }
                var i = 0
                while !stop.load(ordering: .relaxed) && i < 20_000 {
                    let body = LedgerFixture.web3Body("OUT-\(t)-\(i % 5)", status: [1, 2, 5, 3, 4][i % 5], extra: #","seq":"\#(t)-\#(i)""#)
                    i += 1
                    let started = Date()
                    do {
                        let reply = try ledger.sendWeb3(body)
                        answered.with { $0[reply.status, default: 0] += 1 }
                        if reply.status == 200 { acknowledged.with { $0.append(body) } }
                        if reply.status == 503 { usleep(20_000) }
                        if reply.status != 200 && reply.status != 503 { odd.with { $0.append("\(reply)") } }
                    } catch {
                        answered.with { $0[0, default: 0] += 1 }
                        odd.with { $0.append("no answer after \(Date().timeIntervalSince(started)) s: \(error)") }
                    }
                    let seconds = Date().timeIntervalSince(started)
                    if seconds > 10 { slow.with { $0.append("\(seconds) s") } }
                }
            }.start()
        }
        _ = eventually(within: 20, every: 0.01) { acknowledged.with { $0.count } >= 100 }
        try cluster.stop()
        Thread.sleep(forTimeInterval: 1.5)
        try cluster.start()
        let resumed = acknowledged.with { $0.count }
        _ = eventually(within: 15, every: 0.05) { acknowledged.with { $0.count } >= resumed + 100 }
        stop.store(true, ordering: .relaxed)
        group.wait()

        let counts = answered.snapshot
        #expect((counts[503] ?? 0) > 0, "the outage was seen: \(counts)")
        #expect(Set(counts.keys).isSubset(of: [200, 503]), "every delivery got 200 or 503: \(counts); \(odd.snapshot.prefix(5))")
        #expect(slow.snapshot.isEmpty, "answers slower than the request timeout: \(slow.snapshot)")
        #expect(acknowledged.with { $0.count } >= resumed + 100, "the load did not resume after the restart: \(counts)")

        let c = try ledger.connect()
        defer { c.close() }
        var notOnce = 0
        for body in acknowledged.snapshot {
            let n = try c.query("SELECT count(*) AS n FROM ledger.events WHERE idempotency_key = $1",
                                [.text(LedgerFixture.web3Key(body))]).int64(0, "n")
            if n != 1 { notOnce += 1 }
        }
        #expect(notOnce == 0, "\(notOnce) acknowledged webhooks are not stored exactly once")
        let total = try c.query("SELECT count(*) AS n FROM ledger.events").int64(0, "n")
        #expect(try ChainVerifier().verify(on: c) == .intact(events: total, head: total))
        #expect(try ledger.verify() == [], "read models match a replay after the outage")
    }
}

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
