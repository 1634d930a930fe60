import Dispatch
import Foundation
import LedgerAPI
import LedgerHTTP
import LedgerObservability
import LedgerPostgres
import LedgerService
import Synchronization

/// `ledger serve`: runs until SIGTERM or SIGINT, then shuts down gracefully.
struct ServeCommand {
    let cli: LedgerCLI

    func run(_ words: [String]) throws -> Int32 {
        let args = try Arguments(words, valued: [])
        if args.has("help") {
            cli.output("""
                usage: ledger serve
                  Serves the HTTP API on LEDGER_LISTEN (default 127.0.0.1:8080) until SIGTERM/SIGINT.
                  Configuration: DATABASE_URL, LEDGER_WEB3_API_KEYS, LEDGER_BANXA_API_KEY, LEDGER_BANXA_API_SECRETS,
                  LEDGER_SIGNATURE_TOLERANCE, LEDGER_MAX_BODY, LEDGER_HTTP_*, LEDGER_CHECKPOINT_* (docs/operations.md lists every variable).
                  Needs Migrations/ (LEDGER_MIGRATIONS) and API/openapi.json (LEDGER_OPENAPI).
                """)
            return 0
        }
        try args.allowOnly(flags: ["help"])
        try args.refuseWords("serve")
        let configuration = try cli.configuration(as: .service)
        // A DATABASE_URL libpq cannot read is a configuration error now, not a 500 on every request.
        try PostgresConnection.validate(connectionString: configuration.databaseURL)
        // A key it cannot use stops it here (exit 2), not at the first checkpoint an hour in.
        let signer = try CheckpointSigner.configured(configuration.service.checkpoints)
        // Before any thread starts (the log writer's is the first): every thread inherits the block.
        let shutdownSignals = ShutdownSignals.block()
        // One write(2) per access-log line was a measurable share of a read: lines are
        // written in batches every 50 ms; warnings and errors at once.
        let logWriter = BufferedLineWriter(fd: 2, flushInterval: 0.05)
        defer { logWriter.close() }
        let logger = Logger(minimumLevel: .info, writer: logWriter)
        // /readyz reports whether every migration is applied: without them it could not tell.
        let migrator = try cli.migrator(configuration)
        let openAPI: OpenAPIDocument
        do {
            openAPI = try OpenAPIDocument.load(explicit: configuration.openAPIPath, executablePath: cli.executablePath)
        } catch {
            throw CLIError.failed(error.description, exitCode: 2)
        }
        let console = try consoleFiles(configuration, logger: logger)
        let app = LedgerApplication(configuration: configuration, logger: logger, migrator: migrator, openAPIDocument: openAPI,
                                    console: console, signer: signer)
        try app.start()
        // An IPv6 address goes in brackets, as a URL writes it.
        let host = configuration.http.host.contains(":") ? "[\(configuration.http.host)]" : configuration.http.host
        FileHandle.standardOutput.write(Data("ledger listening on http://\(host):\(app.port ?? configuration.http.port)\n".utf8))

        let received = shutdownSignals.wait()
        logger.info("shutting down: finishing requests in flight", [("signal", .string(Self.name(received)))])
        let stopped = Atomic<Bool>(false)
        // A second signal, or a stop that outlasts LEDGER_SHUTDOWN_TIMEOUT (a commit stuck
        // behind a lock nobody releases), ends the process at once. Nothing acknowledged is
        // lost: a 2xx goes out only after its commit. A transaction whose COMMIT was not
        // sent yet is rolled back by PostgreSQL; one whose COMMIT was sent (with its last
        // statements) may still commit once the lock is released: its sender got no 2xx, and
        // its redelivery is answered as a duplicate.
        let limit = configuration.shutdownTimeoutSeconds
        let guardThread = Thread {
            let second = shutdownSignals.wait(timeoutSeconds: Double(limit))
            guard !stopped.load(ordering: .acquiring) else { return }
            if let second {
                logger.error("stopping now on a second signal: requests still in flight get no answer",
                             [("signal", .string(Self.name(second)))])
            } else {
                logger.error("the graceful stop did not finish within LEDGER_SHUTDOWN_TIMEOUT: exiting now; requests still in flight get no answer",
                             [("seconds", .int(limit))])
            }
            logWriter.flush()
            _exit(1)
        }
        guardThread.name = "shutdown-guard"
        guardThread.start()
        app.stop()
        stopped.store(true, ordering: .releasing)
        return 0
    }

    /// The console's folder: LEDGER_CONSOLE must hold it (exit 2 otherwise); without the
    /// variable and with no Console/ found, the API is served and /console says what is missing.
    private func consoleFiles(_ configuration: LedgerConfiguration, logger: Logger) throws -> ConsoleFiles? {
        guard let folder = ConsoleFiles.locate(explicit: configuration.consolePath, executablePath: cli.executablePath) else {
            logger.warning("no console folder found (LEDGER_CONSOLE, or Console/ in the project folder): /console/ answers 404")
            return nil
        }
        do {
            return try ConsoleFiles.load(folder: folder)
        } catch {
            throw CLIError.failed(error.description, exitCode: 2)
        }
    }

    private static func name(_ signal: Int32) -> String { signal == SIGINT ? "SIGINT" : "SIGTERM" }
}
