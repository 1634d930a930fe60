import Foundation
import Synchronization
import LedgerCore
import LedgerHTTP
import LedgerPostgres

extension Poller {
    /// The poller `configuration` asks for, or nil when polling is off (no
    /// `LEDGER_WEB3_API_BASE`). `LedgerConfiguration` has checked the base and the key.
    static func configured(_ configuration: LedgerConfiguration, pool: ConnectionPool, committer: GroupCommitter,
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
/// `stop`. A pass looks for newly pollable orders among those updated since a minute
/// before the last pass began (the first pass: the poller's whole horizon).
final class PollerLoop: Sendable {
    private let poller: Poller
    private let intervalSeconds: Double
    private let stopping = Mutex(false)
    private let started = Mutex(false)
    private let wake = NSCondition()
    private let finished = DispatchSemaphore(value: 0)

    init(poller: Poller, intervalSeconds: Double = 5) {
        self.poller = poller
        self.intervalSeconds = intervalSeconds
    }

    func start() {
        guard started.withLock({ s -> Bool in defer { s = true }; return !s }) else { return }
        let thread = Thread { [self] in
            Thread.current.name = "ledger-poller"
            var since = Timestamp(microseconds: Timestamp.now().microseconds - PollPolicy.maxAgeSeconds * 1_000_000)
            while !stopping.withLock({ $0 }) {
                let began = Timestamp.now()
                do {
                    let summary = try poller.pass(since: since)
                    since = Timestamp(microseconds: began.microseconds - 60_000_000)
                    if summary.polled > 0 {
                        poller.logger.info("poller pass", [("polled", .int(summary.polled)), ("recorded", .int(summary.recorded)),
                                                           ("failed", .int(summary.failed))])
                    }
                } catch {
                    poller.logger.warning("a poller pass failed; the next one tries again",
                                          [("error", .string(String(describing: error)))])
                }
                wake.lock()
                if !stopping.withLock({ $0 }) { _ = wake.wait(until: Date(timeIntervalSinceNow: intervalSeconds)) }
                wake.unlock()
            }
            finished.signal()
        }
        thread.start()
    }

    /// Ends the loop after the pass in progress (each query is bounded by the gateway's timeout).
    func stop() {
        stopping.withLock { $0 = true }
        guard started.withLock({ $0 }) else { return }
        wake.lock()
        wake.signal()
        wake.unlock()
        finished.wait()
    }
}
