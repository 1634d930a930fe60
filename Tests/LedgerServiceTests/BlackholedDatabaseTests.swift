import Foundation
import LedgerCore
import LedgerPostgres
import LedgerTestSupport
import Testing

/// issue 4, Faults: a database host that vanishes from the network (no refusal,
/// no reset: packets go nowhere) still gets every request a 503 with
/// Retry-After within the request timeout, reads and token lookups on the
/// polling threads included, and the service recovers once the host is back.
@Suite("A black-holed database host")
struct BlackholedDatabaseTests {
    static let requestTimeout = 6.0

    /// Runs `request`: a 503 problem with Retry-After within the request timeout.
    private func expectUnavailableInTime(_ what: String, _ request: () throws -> Reply) {
        let started = Date()
        do {
            let reply = try request()
            let seconds = Date().timeIntervalSince(started)
            #expect(reply.status == 503, "\(what): \(reply)")
            #expect(reply.header("Retry-After") != nil, "\(what): no Retry-After in \(reply.headers)")
            #expect(seconds <= Self.requestTimeout + 0.5, "\(what) took \(seconds) s against a \(Self.requestTimeout) s request timeout")
        } catch {
            Issue.record("\(what) got no HTTP answer after \(Date().timeIntervalSince(started)) s: \(error)")
        }
    }

    @Test("inline reads, reads with a token to look up, document reads and writes answer 503 within the request timeout; then it recovers")
    func blackholedHost() throws {
        let db = try TestDatabase.create("blackhole")
        defer { LedgerFixture.drop(db) }
        guard let upstream = URLComponents(string: db.url)?.port else {
            Issue.record("the test database's URL has no port: \(db.url)")
            return
        }
        let proxy = try BlackholeProxy(upstreamPort: upstream)
        let ledger = try LedgerFixture(databaseURL: proxy.rewrite(db.url)) { $0.requestTimeoutSeconds = Self.requestTimeout }
        // The host comes back before the service stops: a stop must not wait on a black hole.
        defer { proxy.restore(); ledger.stop(); proxy.stop() }
        #expect(try ledger.register("BH-1").status == 201)
        let client = try HTTPClient(port: ledger.port, timeout: Self.requestTimeout + 5)

        /// Brings the host back, waits until the support token's lookup is cached (5 s) and
        /// reads work, then black-holes the host and runs `check` at once.
        func whileBlackholed(_ what: String, _ check: () throws -> Reply) {
            proxy.restore()
            let ready = eventually(within: 20, every: 0.1) {
                try client.get("/v1/orders/BH-1/events", token: ledger.support).status == 200
                    && client.get("/v1/orders?limit=5", token: ledger.support).status == 200
                    && client.get("/v1/orders/BH-1", token: ledger.support).status == 200
            }
            guard ready else {
                Issue.record("\(what): the service did not recover after the host came back")
                return
            }
            proxy.blackhole()
            expectUnavailableInTime(what, check)
        }

        whileBlackholed("an inline timeline read") { try client.get("/v1/orders/BH-1/events", token: ledger.support) }
        whileBlackholed("an inline list") { try client.get("/v1/orders?limit=5", token: ledger.support) }
        whileBlackholed("a document read") { try client.get("/v1/orders/BH-1", token: ledger.support) }
        proxy.restore()
        let uncached = try ledger.token(.auditor)
        whileBlackholed("a read whose token must be looked up") { try client.get("/v1/orders/BH-1/events", token: uncached) }
        whileBlackholed("a webhook") {
            let body = LedgerFixture.web3Body("BH-1", status: 3)
            return try client.post("/v1/webhooks/web3", body: body,
                                   headers: LedgerFixture.web3Headers(body, timestamp: String(Timestamp.now().seconds)))
        }
        #expect(try client.get("/healthz").status == 200, "the polling threads still serve")

        proxy.restore()
        var last: Reply?
        let recovered = eventually(within: 20, every: 0.25) {
            last = try client.get("/v1/orders/BH-1/events", token: uncached)
            return last?.status == 200
        }
        #expect(recovered, "reads still fail 20 s after the host came back: \(last.map(String.init(describing:)) ?? "no answer")")
        #expect(try ledger.sendWeb3(LedgerFixture.web3Body("BH-1", status: 3)).status == 200)
    }
}
