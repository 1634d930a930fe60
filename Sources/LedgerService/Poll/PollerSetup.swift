import Foundation
import Synchronization
import LedgerCore
import LedgerObservability
import LedgerPostgres

extension Poller {
    /// The poller `configuration` asks for, or nil when polling is off (no
    /// `LEDGER_WEB3_API_BASE`). `ServiceConfiguration` has checked the base and the key.
    package static func configured(_ configuration: ServiceConfiguration, pool: ConnectionPool, committer: GroupCommitter,
                           logger: Logger) throws -> Poller? {
        guard let base = configuration.web3APIBase else { return nil }
        guard let key = configuration.web3APIKeys.first else {
            throw ConfigurationError.missing("LEDGER_WEB3_API_KEYS",
                                             hint: "the poller sends the first key as X-Pay-Api-Key; LEDGER_WEB3_API_BASE is set")
        }
        return Poller(pool: pool, committer: committer, gateway: try Web3Gateway(base: base, apiKey: key), logger: logger)
    }
}

/// `ledger serve`'s poller: a pass every `intervalSeconds` on a thread of its own, until
/// stopped. A pass looks for newly pollable orders among those updated since a minute
/// before the last pass began (PostgreSQL's clock; the first pass: the whole horizon).
package final class PollerLoop: Sendable {
    private let poller: Poller
    private let intervalSeconds: Double
    private let state = Mutex(Phase.idle)
    private let wake = NSCondition()
    private let finished = DispatchSemaphore(value: 0)

    private enum Phase { case idle, running, stopping, stopped }

    package init(poller: Poller, intervalSeconds: Double = 5) {
        self.poller = poller
        self.intervalSeconds = intervalSeconds
    }

    private var isStopping: Bool { state.withLock { $0 != .running } }

    package func start() {
        guard state.withLock({ phase -> Bool in
            guard phase == .idle else { return false }
            phase = .running
            return true
        }) else { return }
        let thread = Thread { [self] in
            Thread.current.name = "ledger-poller"
            var since: Timestamp?
            while !isStopping {
                do {
                    let (summary, began) = try poller.pass(since: since, stopping: { self.isStopping })
                    since = Timestamp(microseconds: began.microseconds - 60_000_000)
                    if summary.polled > 0 {
                        poller.logger.info("poller pass", [("polled", .int(summary.polled)), ("recorded", .int(summary.recorded)),
                                                           ("failed", .int(summary.failed))])
                    }
                } catch {
                    poller.logger.warning("a poller pass failed; the next one tries again",
                                          [("error", .string(poller.gateway.redacted(String(describing: error))))])
                }
                wake.lock()
                if !isStopping { _ = wake.wait(until: Date(timeIntervalSinceNow: intervalSeconds)) }
                wake.unlock()
            }
            finished.signal()
        }
        thread.start()
    }

    /// Asks the loop to end after the order it is asking about (each query is bounded by
    /// the gateway's timeout); returns at once. `waitUntilStopped` waits for it.
    package func requestStop() {
        let wasRunning = state.withLock { phase -> Bool in
            defer { if phase == .running || phase == .idle { phase = phase == .running ? .stopping : .stopped } }
            return phase == .running
        }
        guard wasRunning else { return }
        wake.lock()
        wake.signal()
        wake.unlock()
    }

    /// Waits for the loop's thread to end (at once when it never ran or already ended).
    package func waitUntilStopped() {
        requestStop()
        let mustWait = state.withLock { phase -> Bool in
            guard phase == .stopping else { return false }
            phase = .stopped
            return true
        }
        if mustWait { finished.wait() }
    }
}
