import Dispatch
import Foundation
import LedgerObservability
import LedgerPostgres
import Synchronization

/// Makes a token change (a revocation above all) take effect at once: listens on
/// `ledger_token_changes` (Migration 025) with a connection of its own and empties
/// the authenticator's cache whenever a change commits, in this process or any other.
///
/// While it has no connection (the database is down, or it is reconnecting), cached
/// lookups expire after the authenticator's `cacheSeconds`, as they would without
/// it; each time it (re)connects it empties the cache, since changes made while it
/// was away went unheard.
package final class TokenChangeListener: Sendable {
    package static let channel = "ledger_token_changes"

    private let connectionString: String
    private let authenticator: Authenticator
    private let logger: Logger
    private let stopping = Atomic<Bool>(false)
    private let listening = Atomic<Bool>(false)
    private let ready = DispatchSemaphore(value: 0)
    private let stopped = DispatchSemaphore(value: 0)
    private let started = Atomic<Bool>(false)

    package init(connectionString: String, authenticator: Authenticator, logger: Logger) {
        self.connectionString = connectionString
        self.authenticator = authenticator
        self.logger = logger
    }

    /// True while a LISTEN is in place (changes are heard at once).
    package var isListening: Bool { listening.load(ordering: .acquiring) }

    /// Starts listening on a thread of its own, and waits up to `readyWithin` seconds for
    /// the first LISTEN: a service started with its database up hears every change from
    /// its first request on. (Started with the database down, it listens once it can.)
    /// A listener starts once: after `stop` it stays stopped, as the service does.
    package func start(readyWithin seconds: Double = 2) {
        guard !started.exchange(true, ordering: .acquiringAndReleasing) else { return }
        let thread = Thread { [self] in
            Thread.current.name = "token-listener"
            run()
            stopped.signal()
        }
        thread.start()
        _ = ready.wait(timeout: .now() + seconds)
    }

    /// Stops listening; returns once the thread has ended (it checks every quarter second).
    package func stop() {
        guard started.load(ordering: .acquiring), !stopping.exchange(true, ordering: .acquiringAndReleasing) else { return }
        _ = stopped.wait(timeout: .now() + 5)
    }

    private func run() {
        var pause = 0.25
        var reported = false
        while !stopping.load(ordering: .acquiring) {
            do {
                let connection = try PostgresConnection(connectionString: connectionString, connectTimeoutSeconds: 2)
                defer { connection.close() }
                try connection.listen(Self.channel)
                authenticator.forgetAll()
                listening.store(true, ordering: .releasing)
                ready.signal()
                if reported { logger.info("token change listener reconnected") }
                reported = false
                pause = 0.25
                while !stopping.load(ordering: .acquiring) {
                    if !(try connection.awaitNotifications(timeoutSeconds: 0.25)).isEmpty { authenticator.forgetAll() }
                }
            } catch {
                listening.store(false, ordering: .releasing)
                if !reported {
                    logger.warning("token change listener has no connection; token changes take effect when cached lookups expire",
                                   [("error", .string(String(describing: error)))])
                    reported = true
                }
                var waited = 0.0
                while waited < pause && !stopping.load(ordering: .acquiring) {
                    usleep(50_000)
                    waited += 0.05
                }
                pause = min(pause * 2, 5)
            }
        }
        listening.store(false, ordering: .releasing)
    }
}
