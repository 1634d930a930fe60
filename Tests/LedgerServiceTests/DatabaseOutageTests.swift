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

        let load = WebhookLoad(port: ledger.port, threads: 6, prefix: "OUT", orders: 5, limit: 20_000)
        load.waitForAcknowledged(100, within: 20)
        try cluster.stop()
        Thread.sleep(forTimeInterval: 1.5)
        try cluster.start()
        let resumed = load.acknowledged.count
        load.waitForAcknowledged(resumed + 100, within: 15)
        load.stop()

        let counts = load.statuses
        #expect((counts[503] ?? 0) > 0, "the outage was seen: \(counts)")
        #expect(Set(counts.keys).isSubset(of: [200, 503]), "every delivery got 200 or 503: \(counts); \(load.unusual.prefix(5))")
        #expect(load.longestRequest <= 10, "answers slower than the request timeout: \(load.longestRequest) s")
        #expect(load.acknowledged.count >= resumed + 100, "the load did not resume after the restart: \(counts)")
        try expectEveryAcknowledgedStoredOnce(load.acknowledged, databaseURL: cluster.url, after: "the outage")
    }
}
