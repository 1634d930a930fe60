import LedgerCore
import LedgerHTTP
import LedgerObservability
import LedgerPostgres
import LedgerService

/// The running service: the HTTP server in front of the service runtime (database
/// pools, group committer, use cases), wired from configuration values. `start()`
/// returns the bound port; `stop()` stops accepting, finishes requests in flight,
/// and flushes the commits they wait for.
public final class LedgerApplication: Sendable {
    public let configuration: LedgerConfiguration
    let runtime: ServiceRuntime
    let server: HTTPServer
    let logger: Logger
    /// What `/metrics` renders (its collectors run on every scrape).
    var metricsRegistry: MetricsRegistry { runtime.metricsRegistry }

    public init(configuration: LedgerConfiguration, logger: Logger, migrator: Migrator? = nil,
                openAPIDocument: OpenAPIDocument, console: ConsoleFiles? = nil, poolSize: Int = 16,
                signer: CheckpointSigner? = nil) {
        let http = configuration.http
        self.configuration = configuration
        self.logger = logger
        // Inline reads block a polling thread (one per polling thread, each runs one request
        // at a time): a read's borrow (connecting and every statement included) ends within
        // the request timeout, after the token lookup's share of it, and the server cancels a
        // statement that runs as long (see docs/http.md, *How requests run*).
        let runtime = ServiceRuntime(configuration: configuration.service, logger: logger, migrator: migrator, poolSize: poolSize,
                                     readConnections: max(1, http.pollingThreads),
                                     readSeconds: Self.readBudgetSeconds(requestTimeout: http.requestTimeoutSeconds),
                                     signer: signer)
        let router = Route.router
        let handler = APIHandler(
            router: router,
            openAPIDocument: openAPIDocument,
            console: ConsoleResponder(files: console),
            authenticator: runtime.authenticator,
            ingestion: runtime.ingestion,
            queries: runtime.queries,
            documents: runtime.documents,
            operations: runtime.operations,
            metrics: runtime.metricsRegistry,
            exports: ExportResponses(connectionString: configuration.service.database.connectionString, signer: signer),
            logger: logger,
            clock: { Timestamp.now() })
        let instrumentation = HTTPInstrumentation(metrics: runtime.metricsRegistry)
        self.server = HTTPServer(configuration: http, logger: logger,
                                 observer: instrumentation.observer(logger: logger) { request in
                                     // The console's files share one label, so its paths add no series.
                                     ConsoleRequest.covers(request.path) ? "console" : router.label(method: request.method, path: request.path)
                                 },
                                 runsInline: { handler.runsInline($0) },
                                 deferred: { handler.startDeferred($0, $1) },
                                 handler: { handler.handle($0) })
        self.runtime = runtime
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
        var port = 0
        try runtime.start { port = try server.start() }
        logger.info("ledger serving", [("port", .int(port))])
        return port
    }

    public var port: Int? { server.port }

    public func stop() {
        runtime.stop { server.stop() }
        logger.info("ledger stopped")
    }
}
