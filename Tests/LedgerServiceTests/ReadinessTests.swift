import Foundation
import LedgerCore
import LedgerPostgres
@testable import LedgerService
import LedgerTestSupport
import Testing

@Suite("Readiness")
struct ReadinessTests {
    @Test("readyz answers 503 with Retry-After while a migration is pending, and healthz still 200")
    func pendingMigration() throws {
        var migrations = try Migration.load(from: TestDatabase.migrationsDirectory)
        migrations.append(Migration(name: "999_not_yet_applied.sql", sql: "SELECT 1;"))
        let ledger = try LedgerFixture.start("ready", migrator: Migrator(migrations: migrations))
        defer { ledger.stop() }
        let ready = try ledger.client.get("/readyz")
        #expect(ready.status == 503 && ready.isProblem, "\(ready)")
        #expect(ready.header("Retry-After") != nil)
        #expect(try ledger.client.get("/healthz").status == 200)
    }

    @Test("readyz answers 200 when every migration is applied")
    func currentMigrations() throws {
        let ledger = try LedgerFixture.start("ready", migrator: Migrator(migrations: Migration.load(from: TestDatabase.migrationsDirectory)))
        defer { ledger.stop() }
        let ready = try ledger.client.get("/readyz")
        #expect(ready.status == 200, "\(ready)")
    }
}
