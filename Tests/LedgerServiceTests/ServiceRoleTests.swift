import LedgerCore
import LedgerHTTP
import LedgerPostgres
@testable import LedgerService
import LedgerTestSupport
import Testing

/// Ops/run serves as `ledger_service`, which may only read and append events:
/// every route must work with exactly the privileges the migrations grant.
@Suite("The service as its least-privileged role")
struct ServiceRoleTests {
    @Test("as ledger_service: ready, registers, ingests and quarantines webhooks, corrects, reads, and cannot rewrite events")
    func everyPathWorks() throws {
        let db = try TestDatabase.create("role")
        defer { LedgerFixture.drop(db) }
        let migrator = Migrator(migrations: try Migration.load(from: TestDatabase.migrationsDirectory))
        let f = try LedgerFixture(databaseURL: db.serviceURL, migrator: migrator)
        defer { f.stop() }

        #expect(try f.client.get("/readyz").status == 200)
        #expect(try f.register("R-1").status == 201)
        let body = LedgerFixture.web3Body("R-1", status: 3)
        #expect(try f.sendWeb3(body).status == 200)
        #expect(try f.sendWeb3(body, key: "not-a-key").status == 401)
        #expect(try f.count("SELECT count(*) AS n FROM ledger.quarantine") == 1)
        #expect(try f.client.post("/v1/orders/R-1/corrections", token: f.auditor, json: #"{"status":4,"reason":"settled"}"#).status == 201)
        #expect(try f.client.post("/v1/orders/R-1/client-tokens", token: f.ingest, json: "{}").status == 201)
        #expect(try f.order("R-1").status == 200)
        #expect(try f.client.get("/v1/orders/R-1/events", token: f.auditor).status == 200)
        #expect(try f.client.get("/v1/ledger/head", token: f.auditor).status == 200)
        #expect(try f.client.get("/v1/orders", token: f.support).status == 200)

        let service = try f.connect()
        #expect(throws: PostgresError.self) { try service.query("UPDATE ledger.events SET type = 'X'") }
        #expect(throws: PostgresError.self) { try service.query("DELETE FROM ledger.quarantine") }
        #expect(try LedgerFixture.verify(databaseURL: db.url).isEmpty)
    }
}
