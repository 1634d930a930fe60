import Foundation
import LedgerCore
import LedgerPostgres
import LedgerTestSupport
import Testing

@Suite("Surviving a PostgreSQL restart")
struct ReconnectionTests {
    @Test("the pool and the group committer work again after the server restarts")
    func reconnectAfterRestart() throws {
        let cluster = try ScratchCluster()
        defer { cluster.destroy() }
        let admin = try PostgresConnection(connectionString: cluster.url)
        try Migrator(migrations: Migration.load(from: TestDatabase.migrationsDirectory)).migrate(admin)
        admin.close()

        let pool = ConnectionPool(configuration: DatabaseConfiguration(connectionString: cluster.url, poolSize: 2,
                                                                       acquireTimeoutSeconds: 1, connectTimeoutSeconds: 1))
        let committer = GroupCommitter(pool: pool)
        defer { committer.shutdown(); pool.close() }
        #expect(try committer.append([sampleEvent(key: "before")])[0].receipt?.position == 1)

        try cluster.stop()
        do {
            _ = try committer.append([sampleEvent(key: "during")], timeout: 5)
            Issue.record("an append succeeded while the server was down")
        } catch let error as PostgresError {
            #expect(error.isUnavailable, "a stopped server must read as unavailable, got \(error)")
        }

        try cluster.start()
        let after = try committer.append([sampleEvent(key: "after")])
        #expect(after[0].receipt?.position == 2)
        let count = try pool.withConnection { try $0.query("SELECT count(*) AS n FROM ledger.events").int64(0, "n") }
        #expect(count == 2)

        // A restart between two uses: the idle connections the server closed are replaced on
        // their next use, which succeeds (no spurious 503 for the request that meets them).
        try cluster.stop()
        try cluster.start()
        let afterIdleRestart = try committer.append([sampleEvent(key: "after-idle-restart")])
        #expect(afterIdleRestart[0].receipt?.position == 3)
        #expect(try pool.withConnection { try $0.query("SELECT 1 AS n").int64(0, "n") } == 1)
    }
}
