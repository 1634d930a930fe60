import LedgerPostgres
import LedgerTestSupport
import Testing

@Suite("Migrations")
struct MigrationTests {
    @Test("migrating twice applies nothing the second time and reports up to date")
    func idempotent() throws {
        let db = try TestDatabase.create("migrate")
        let migrator = Migrator(migrations: try Migration.load(from: TestDatabase.migrationsDirectory))
        let c = try db.connect()
        #expect(try migrator.migrate(c).isEmpty)
        let status = try migrator.status(c)
        #expect(status.isCurrent)
        #expect(status.applied.count == migrator.migrations.count)
    }

    @Test("a migration changed after it was applied is refused, by name")
    func changedMigrationRefused() throws {
        let db = try TestDatabase.create("migrate")
        var migrations = try Migration.load(from: TestDatabase.migrationsDirectory)
        migrations[1] = Migration(name: migrations[1].name, sql: migrations[1].sql + "\n-- edited")
        let c = try db.connect()
        #expect {
            try Migrator(migrations: migrations).migrate(c)
        } throws: { error in
            "\(error)".contains(migrations[1].name) && "\(error)".contains("changed")
        }
    }

    @Test("pending migrations are listed and a failing one leaves nothing half-applied")
    func pendingAndAtomic() throws {
        let db = try TestDatabase.create("migrate")
        let c = try db.connect()
        var migrations = try Migration.load(from: TestDatabase.migrationsDirectory)
        migrations.append(Migration(name: "999_broken.sql", sql: "CREATE TABLE ledger.half (x int); SELECT no_such_function();"))
        let migrator = Migrator(migrations: migrations)
        #expect(try migrator.status(c).pending == ["999_broken.sql"])
        #expect(throws: MigrationError.self) { try migrator.migrate(c) }
        #expect(try c.query("SELECT to_regclass('ledger.half') IS NULL AS gone").bool(0, "gone"))
        #expect(try migrator.status(c).pending == ["999_broken.sql"])
    }
}
