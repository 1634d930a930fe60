import LedgerCore
import LedgerObservability
import LedgerPostgres

/// The service without its transport: the database pools, the single writer, the use
/// cases and the loops that run beside them (token changes, the poller), wired from
/// one configuration value. `LedgerAPI` puts an HTTP server in front of it.
package final class ServiceRuntime: Sendable {
    package let configuration: ServiceConfiguration
    package let logger: Logger
    package let pool: ConnectionPool
    /// Connections for the reads that run on the HTTP polling threads, so a read never
    /// waits behind writes for a connection.
    package let readPool: ConnectionPool
    package let committer: GroupCommitter
    /// Where an order's document is read (batched).
    package let documents: DocumentBatcher
    package let metricsRegistry: MetricsRegistry
    package let authenticator: Authenticator
    package let ingestion: Ingestion
    package let queries: OrderQueries
    package let operations: Operations
    /// Empties the token cache when a token changes (a revocation takes effect at once).
    let tokenChanges: TokenChangeListener
    /// The web3 poller, when `LEDGER_WEB3_API_BASE` turns it on.
    let poller: PollerLoop?
    /// The periodic and final checkpoints, when a signing key is configured.
    let checkpoints: CheckpointLoop?
    /// The signer (the periodic loop's, and the exports'), when a key is configured.
    package let signer: CheckpointSigner?

    /// `readConnections` and `readSeconds` size the read pool for the transport's threads
    /// and its request deadline.
    package init(configuration: ServiceConfiguration, logger: Logger, migrator: Migrator?, poolSize: Int,
                 readConnections: Int, readSeconds: Double, signer: CheckpointSigner? = nil) {
        self.configuration = configuration
        self.logger = logger
        var database = configuration.database
        database.poolSize = poolSize
        database.acquireTimeoutSeconds = 3
        database.connectTimeoutSeconds = 2
        let pool = ConnectionPool(configuration: database)
        var readDatabase = database
        readDatabase.poolSize = readConnections + 1   // + the DocumentBatcher's
        readDatabase.borrowTimeoutSeconds = readSeconds
        // A second less, so a slow (not vanished) server cancels the statement itself first
        // and the connection is kept, rather than dropped at the borrow's deadline.
        readDatabase.statementTimeoutSeconds = max(0.5, readSeconds - 1)
        let readPool = ConnectionPool(configuration: readDatabase)
        // After a restart the writer learns the recent orders and keys before it skips probes
        // again (docs/decisions.md, *Most probes are skipped*).
        let committer = GroupCommitter(pool: pool, projector: OrderProjection(
            cache: configuration.orderStateCacheSize > 0 ? OrderStateCache(capacity: configuration.orderStateCacheSize) : nil),
            seedHints: ProbeHintSeed(),
            onHintSeedError: { [logger] error in
                logger.warning("the writer's probe hints could not be read from the store yet: it probes every key and stream meanwhile, and tries again each second",
                               [("error", .string(String(describing: error)))])
            },
            writerNice: Int32(configuration.writerNice))
        if let priority = committer.writerPriority {
            if priority.applied { logger.info(priority.description) } else { logger.warning(priority.description) }
        }
        let registry = MetricsRegistry()
        let metrics = ServiceMetrics(registry: registry, committer: committer, pool: pool, readPool: readPool)
        let authenticator = Authenticator(pool: pool)
        self.tokenChanges = TokenChangeListener(connectionString: database.connectionString,
                                                authenticator: authenticator, logger: logger)
        let quarantine = Quarantine(pool: pool, rejected: metrics.rejectedDeliveries, logger: logger,
                                    budget: QuarantineBudget(maxBytes: configuration.quarantineMaxBytes, dropped: metrics.quarantineFull),
                                    sources: QuarantineSourceLimit(perMinute: configuration.quarantinePerSourcePerMinute),
                                    rateLimited: metrics.quarantineRateLimited)
        self.ingestion = Ingestion(configuration: configuration, pool: pool, committer: committer, quarantine: quarantine)
        self.queries = OrderQueries(pool: readPool)
        self.documents = DocumentBatcher(pool: readPool)
        self.operations = Operations(pool: pool, migrator: migrator, metrics: registry)
        self.authenticator = authenticator
        self.metricsRegistry = registry
        self.pool = pool
        self.readPool = readPool
        self.committer = committer
        self.signer = signer
        self.checkpoints = signer.map {
            CheckpointLoop(signer: $0, pool: pool, logger: logger, intervalSeconds: configuration.checkpoints.intervalSeconds)
        }
        do {
            poller = try Poller.configured(configuration, pool: pool, committer: committer, logger: logger).map { PollerLoop(poller: $0) }
        } catch {
            logger.error("the poller is off: its configuration was refused", [("error", .string(String(describing: error)))])
            poller = nil
        }
    }

    /// Starts listening for token changes; `serving` starts the transport, and the poller
    /// only once it is up.
    package func start(serving: () throws -> Void) throws {
        tokenChanges.start()
        do {
            try serving()
        } catch {
            tokenChanges.stop()
            throw error
        }
        poller?.start()
        checkpoints?.start()
    }

    /// `draining` stops the transport (requests in flight finish); then the writer flushes
    /// the commits they waited for and the pools close.
    package func stop(draining: () -> Void) {
        poller?.requestStop()   // ends with the order it is asking about, while the server drains
        draining()
        tokenChanges.stop()
        poller?.waitUntilStopped()
        checkpoints?.stop()
        documents.stop()
        committer.shutdown()
        checkpoints?.final()   // covers the writer's last commits
        pool.close()
        readPool.close()
    }
}
