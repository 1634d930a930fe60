import LedgerCore
import LedgerHTTP
import LedgerPostgres

/// The running service: HTTP server, database pool and group committer,
/// wired from configuration values. `start()` returns the bound port;
/// `stop()` stops accepting, finishes requests in flight, and flushes the
/// commits they wait for.
public final class LedgerApplication: Sendable {
    public let configuration: LedgerConfiguration
    let pool: ConnectionPool
    /// Connections for the reads that run on the HTTP polling threads: one per polling thread
    /// (each runs one request at a time), so a read never waits behind writes for a connection.
    let readPool: ConnectionPool
    let committer: GroupCommitter
    let documents: DocumentBatcher
    let server: HTTPServer
    let logger: Logger
    /// What `/metrics` renders (its collectors run on every scrape).
    let metricsRegistry: MetricsRegistry
    /// Empties the token cache when a token changes (a revocation takes effect at once).
    let tokenChanges: TokenChangeListener
    /// The web3 poller, when `LEDGER_WEB3_API_BASE` turns it on.
    let poller: PollerLoop?

    public init(configuration: LedgerConfiguration, http: HTTPServerConfiguration, logger: Logger,
                migrator: Migrator? = nil, openAPIDocument: OpenAPIDocument, poolSize: Int = 16) {
        self.configuration = configuration
        self.logger = logger
        var database = configuration.database
        database.poolSize = poolSize
        database.acquireTimeoutSeconds = 3
        database.connectTimeoutSeconds = 2
        let pool = ConnectionPool(configuration: database)
        // Inline reads block a polling thread: a read's borrow (connecting and every statement
        // included) ends within the request timeout, after the token lookup's share of it,
        // and the server cancels a statement that runs as long (see README, *Reads run inline*).
        var readDatabase = database
        readDatabase.poolSize = max(1, http.pollingThreads) + 1   // + the DocumentBatcher's
        let readSeconds = Self.readBudgetSeconds(requestTimeout: http.requestTimeoutSeconds)
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
        let documents = DocumentBatcher(pool: readPool)
        let router = Route.router
        let authenticator = Authenticator(pool: pool)
        self.tokenChanges = TokenChangeListener(connectionString: database.connectionString,
                                                authenticator: authenticator, logger: logger)
        let handler = APIHandler(
            router: router,
            openAPIDocument: openAPIDocument,
            authenticator: authenticator,
            ingestion: Ingestion(configuration: configuration, pool: pool, committer: committer,
                                 quarantine: Quarantine(pool: pool, rejected: metrics.rejectedDeliveries, logger: logger,
                                                        budget: QuarantineBudget(maxBytes: configuration.quarantineMaxBytes,
                                                                                 dropped: metrics.quarantineFull),
                                                        sources: QuarantineSourceLimit(perMinute: configuration.quarantinePerSourcePerMinute),
                                                        rateLimited: metrics.quarantineRateLimited)),
            queries: OrderQueries(pool: readPool),
            documents: documents,
            operations: Operations(pool: pool, migrator: migrator, metrics: registry),
            exports: ExportResponses(connectionString: database.connectionString),
            logger: logger,
            clock: { Timestamp.now() })
        var httpConfiguration = http
        httpConfiguration.maxBodyBytes = configuration.maxBodyBytes
        let instrumentation = HTTPInstrumentation(metrics: registry)
        self.server = HTTPServer(configuration: httpConfiguration, logger: logger,
                                 observer: instrumentation.observer(logger: logger, router: router),
                                 runsInline: { handler.runsInline($0) },
                                 deferred: { handler.startDeferred($0, $1) },
                                 handler: { handler.handle($0) })
        self.metricsRegistry = registry
        self.pool = pool
        self.readPool = readPool
        self.committer = committer
        self.documents = documents
        do {
            poller = try Poller.configured(configuration, pool: pool, committer: committer, logger: logger).map { PollerLoop(poller: $0) }
        } catch {
            logger.error("the poller is off: its configuration was refused", [("error", .string(String(describing: error)))])
            poller = nil
        }
        instrumentation.sampleInFlight(of: server)   // registers its own collector, once
    }

    /// What an inline read may take of the request timeout: the rest after a token lookup
    /// (`Authenticator.lookupSeconds`) and a second for the answer, one second at least.
    static func readBudgetSeconds(requestTimeout: Double) -> Double {
        guard requestTimeout.isFinite else { return 3_600 }
        return max(1, requestTimeout - Authenticator.lookupSeconds - 1)
    }

    @discardableResult
    public func start() throws -> Int {
        tokenChanges.start()
        let port: Int
        do {
            port = try server.start()
        } catch {
            tokenChanges.stop()
            throw error
        }
        poller?.start()
        logger.info("ledger serving", [("port", .int(port))])
        return port
    }

    public var port: Int? { server.port }

    public func stop() {
        poller?.requestStop()   // ends with the order it is asking about, while the server drains
        server.stop()
        tokenChanges.stop()
        poller?.waitUntilStopped()
        documents.stop()
        committer.shutdown()
        pool.close()
        readPool.close()
        logger.info("ledger stopped")
    }
}
