import LedgerObservability
import LedgerPostgres

/// `ledger poll --once` (operations.md): one pass of the poller over every order that is
/// due, however many, with a writer of its own; nil when polling is off.
package struct PollOnce: Sendable {
    package init() {}

    package func run(_ configuration: ServiceConfiguration, logger: Logger) throws -> Poller.Summary? {
        var database = configuration.database
        database.poolSize = 2
        let pool = ConnectionPool(configuration: database)
        let committer = GroupCommitter(pool: pool, projector: OrderProjection(cache: nil))
        defer {
            committer.shutdown()
            pool.close()
        }
        guard let poller = try Poller.configured(configuration, pool: pool, committer: committer, logger: logger) else { return nil }
        return try poller.pass(since: nil, limit: .max).0
    }
}
