import Foundation
import LedgerCore
import LedgerObservability
import LedgerPostgres
import Synchronization

/// `ledger serve`'s checkpoints: one every `intervalSeconds` when the head has moved, and
/// one more as it stops (`final`), after the writer's last commits.
package final class CheckpointLoop: Sendable {
    private let signer: CheckpointSigner
    private let pool: ConnectionPool
    private let logger: Logger
    private let intervalSeconds: Double
    private let stopping = Atomic<Bool>(false)
    private let wake = NSCondition()
    private let finished = DispatchSemaphore(value: 0)
    private let started = Atomic<Bool>(false)

    package init(signer: CheckpointSigner, pool: ConnectionPool, logger: Logger, intervalSeconds: Int) {
        self.signer = signer
        self.pool = pool
        self.logger = logger
        self.intervalSeconds = Double(intervalSeconds)
    }

    package func start() {
        guard !started.exchange(true, ordering: .acquiringAndReleasing) else { return }
        let thread = Thread { [self] in
            Thread.current.name = "ledger-checkpoints"
            while true {
                wake.lock()
                if !stopping.load(ordering: .acquiring) { _ = wake.wait(until: Date(timeIntervalSinceNow: intervalSeconds)) }
                wake.unlock()
                if stopping.load(ordering: .acquiring) { break }
                signOnce(reason: "interval")
            }
            finished.signal()
        }
        thread.start()
    }

    /// Ends the periodic loop and waits for it; the caller then signs the `final` note.
    package func stop() {
        stopping.store(true, ordering: .releasing)
        wake.lock()
        wake.signal()
        wake.unlock()
        if started.load(ordering: .acquiring) { finished.wait() }
    }

    /// The note at a graceful stop, once the writer has flushed.
    package func final() { signOnce(reason: "shutdown") }

    private func signOnce(reason: String) {
        do {
            let outcome = try pool.withConnection { try signer.checkpoint(on: $0) }
            if case .signed(let checkpoint) = outcome {
                logger.info("signed a checkpoint", [("position", .int(Int(checkpoint.body.position))), ("reason", .string(reason))])
            }
            if case .unstored(let checkpoint) = outcome {
                logger.warning("signed a checkpoint but could not store it: a row this key did not sign holds its position in ledger.signed_checkpoints",
                               [("position", .int(Int(checkpoint.body.position))), ("reason", .string(reason))])
            }
        } catch let error as CheckpointError where error.contradictsLog {
            logger.error("no checkpoint is signed while the stored notes contradict the log; look into it with ledger verify --checkpoints",
                         [("reason", .string(reason)), ("error", .string(error.description))])
        } catch {
            logger.error("a checkpoint could not be signed; the next one tries again",
                         [("reason", .string(reason)), ("error", .string(String(describing: error)))])
        }
    }
}
