import Dispatch
import LedgerCore

/// The writer's memory of the order states it committed most recently, so a
/// batch's events for an order it touched a moment ago need no load (a
/// query, and parsing the stored state) before they are folded.
///
/// An entry is used only for the very next event of its order's stream: it
/// holds the state as of stream version `v`, and is trusted for a batch whose
/// first event of that order is version `v + 1`. Any other appender (another
/// process, a restart) moves the stream past it and the entry is ignored; the
/// read model is a fold of the stream, so nothing else can make it wrong.
/// Entries are kept only once their transaction committed.
///
/// Writer thread only (the GroupCommitter calls the projector from its one
/// writer thread), hence no lock. Bounded: past `capacity` entries, it
/// forgets arbitrary ones down to half the capacity.
final class OrderStateCache: @unchecked Sendable {
    struct Entry {
        var model: (OrderState, Timestamp?)
        var streamVersion: Int
    }

    let capacity: Int
    private var committed: [String: Entry] = [:]
    private var pending: [String: Entry] = [:]

    init(capacity: Int = 4096) {
        self.capacity = max(1, capacity)
    }

    /// The state to fold an order's events into when its first event in the batch is
    /// `streamVersion`, if this cache holds exactly the state before it.
    func model(of no: String, before streamVersion: Int) -> (OrderState, Timestamp?)? {
        guard let entry = committed[no], entry.streamVersion + 1 == streamVersion else { return nil }
        return entry.model
    }

    /// The state as of `streamVersion`, kept if the transaction commits.
    func remember(_ no: String, _ model: (OrderState, Timestamp?), streamVersion: Int) {
        pending[no] = Entry(model: model, streamVersion: streamVersion)
    }

    func commit() {
        committed.merge(pending) { _, new in new }
        pending.removeAll(keepingCapacity: true)
        if committed.count > capacity {   // down to half the capacity, arbitrary entries
            var forgotten: [Entry] = []
            forgotten.reserveCapacity(committed.count - capacity / 2)
            for key in Array(committed.keys.prefix(committed.count - capacity / 2)) {
                if let entry = committed.removeValue(forKey: key) { forgotten.append(entry) }
            }
            // Freeing hundreds of states is not the writer's work: it is on every batch's path.
            let release = Forgotten(forgotten)
            DispatchQueue.global(qos: .utility).async { release.drop() }
        }
    }

    /// The transaction rolled back (or its outcome is unknown): what it would have kept
    /// is dropped. Committed entries stay: a stream that did move fails their version check.
    func rollBack() {
        pending.removeAll(keepingCapacity: true)
    }

    var count: Int { committed.count }

    /// Entries handed to another thread to be freed there. @unchecked Sendable: the
    /// writer gives them up entirely; only the releasing thread touches them after.
    private final class Forgotten: @unchecked Sendable {
        var entries: [Entry]
        init(_ entries: [Entry]) { self.entries = entries }
        func drop() { entries.removeAll() }
    }
}
