import Dispatch
import Foundation
import LedgerCore
import LedgerPostgres

/// The stored states of a batch's orders, read on another connection and thread
/// while the writer appends the batch's events, so the writer neither waits for
/// the load nor parses the states itself.
///
/// Read outside the writer's transaction, a state is the committed one as of the
/// read. It is used only for an order whose stored state has exactly the events
/// before the batch's first one for that order (`eventCount == first version - 1`):
/// an event another writer appended in between moves the stream past it, and the
/// order is then loaded inside the transaction as usual. The read model is a
/// fold of the stream, so nothing else can make such a state wrong.
final class StatePrefetch: @unchecked Sendable {
    // @unchecked: `result` is written once by the reading thread before `done` is signalled,
    // and read only after waiting for it.
    private let done = DispatchSemaphore(value: 0)
    private var result: [String: (OrderState, Timestamp?)] = [:]
    private static let queue = DispatchQueue(label: "ledger.state-prefetch", attributes: .concurrent)

    /// Starts reading the stored states of `numbers` on `pool`.
    init(_ numbers: [MerchantOrderNo], pool: ConnectionPool, within seconds: Double) {
        Self.queue.async { [self] in
            defer { done.signal() }
            result = (try? pool.withConnection(within: seconds) { try OrderReadModel().loadCommitted(numbers, on: $0) }) ?? [:]
        }
    }

    /// States already read (tests).
    init(ready states: [String: (OrderState, Timestamp?)]) {
        result = states
        done.signal()
    }

    /// The states read, waiting at most `seconds` for them (none if they are not there by then).
    func states(waitingAtMost seconds: Double) -> [String: (OrderState, Timestamp?)] {
        guard done.wait(timeout: .now() + seconds) == .success else { return [:] }
        done.signal()   // for a second caller (a retried prepare)
        return result
    }
}
