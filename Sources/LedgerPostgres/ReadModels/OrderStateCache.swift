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
/// It keeps states only while they are reused (`observe`): when the batches'
/// events go to orders that already existed before the batch (an order is
/// registered, then its webhooks follow), the next event of an order usually
/// finds its state here; when they start new orders (webhooks that create their
/// order, a flood of registrations), nothing kept would ever be read, and keeping
/// it cost the writer about 5% (measured). The share of
/// existing orders is a moving average over batches; above `keepAbove` the cache
/// keeps states, below it it keeps none and lets what it holds go stale.
///
/// A rebuild swaps in a new `ledger.orders`, whose rows may differ from the states held
/// here (an old row edited by hand, say). So the entries carry one table, `table` (its
/// OID, read when the cache first keeps states); a commit that folds from an entry checks
/// with it that the table is still the live one (`ledger.orders_table_is`), and when it
/// is not, everything is forgotten (`forgetAll`) and the batch is written again from the
/// new table's rows. (An entry remembered after a swap, from the new table's row, still
/// carries the old table: its first use fails the check the same way, which is safe.)
/// The attempt after one that rolled back having folded from entries folds from none
/// (`bypassed`): should the swap have come between, the retry must not meet the old
/// states again before the check that would forget them.
///
/// Writer thread only (the GroupCommitter calls the projector from its one
/// writer thread), hence no lock. Bounded by two generations of at most half
/// the capacity and half of `maxBytes` each: when the newer one fills up, the older one is dropped
/// whole and the newer one takes its place. (Removing entries one by one from
/// one large dictionary cost more than the cache saved: every removal shifts
/// and rehashes its neighbours, and webhooks of new orders evict on every batch.)
package final class OrderStateCache: @unchecked Sendable {
    package struct Entry {
        var model: (OrderState, Timestamp?)
        var streamVersion: Int
        /// Estimated memory the state holds (`weight(storedBytes:)`).
        var bytes: Int
    }

    /// Memory the entries may hold in all, estimated (both generations): states grow with
    /// an order's observations, and `ledger serve` must stay well under 100 MB.
    package let maxBytes: Int
    package static let defaultMaxBytes = 16 << 20
    private var recentBytes = 0

    /// A state's memory in the process, estimated from the size of its stored text (Swift
    /// strings, arrays and their headers take more than the text). Ops/bench's webhooks on
    /// existing orders put `ledger serve` at 96 MB RSS with this estimate and the default
    /// budget, against about 72 MB with the cache off.
    package static func weight(storedBytes: Int) -> Int { storedBytes * 3 + 512 }

    package let capacity: Int
    private let half: Int
    /// Moving average (over about 16 batches) of the share of a batch's orders that
    /// existed before it.
    private(set) var existingShare = 0.0
    /// Whether states are kept now (see `observe`).
    private(set) var isKeeping = false
    package static let keepAbove = 0.05
    package static let smoothing = 1.0 / 16
    private var recent: [String: Entry] = [:]
    private var older: [String: Entry] = [:]
    private var pending: [String: Entry] = [:]
    /// The OID of the `ledger.orders` the entries were folded against; nil before any is kept.
    package private(set) var table: UInt32?
    /// Whether the transaction under way folded from an entry.
    private var usedInAttempt = false
    /// No entry is used: the last attempt rolled back having folded from some.
    package private(set) var bypassed = false

    package init(capacity: Int = 4096, maxBytes: Int = OrderStateCache.defaultMaxBytes) {
        self.capacity = max(1, capacity)
        self.maxBytes = max(1, maxBytes)
        half = max(1, self.capacity / 2)
        recent.reserveCapacity(half)
    }

    /// A batch touched `orders` orders, `new` of which it started: updates the moving
    /// share of existing orders, and whether states are kept.
    package func observe(orders: Int, new: Int) {
        guard orders > 0 else { return }
        let share = Double(orders - min(new, orders)) / Double(orders)
        existingShare += (share - existingShare) * Self.smoothing
        isKeeping = existingShare > Self.keepAbove
    }

    /// The state to fold an order's events into when its first event in the batch is
    /// `streamVersion`, if this cache holds exactly the state before it.
    package func model(of no: String, before streamVersion: Int) -> (OrderState, Timestamp?)? {
        guard !bypassed, let entry = recent[no] ?? older[no], entry.streamVersion + 1 == streamVersion else { return nil }
        usedInAttempt = true
        return entry.model
    }

    /// The table the states remembered from now on are folded against (read in the
    /// transaction that remembers them); a different one than before forgets every entry.
    package func fold(against table: UInt32) {
        if self.table != table { forgetAll() }
        self.table = table
    }

    /// Forgets every entry and the table: `ledger.orders` was swapped for another.
    package func forgetAll() {
        let dropped = Forgotten(recent.merging(older) { newer, _ in newer })
        recent = [:]
        older = [:]
        pending = [:]
        recentBytes = 0
        table = nil
        if !dropped.entries.isEmpty { DispatchQueue.global(qos: .utility).async { dropped.drop() } }
    }

    /// The state as of `streamVersion`, kept if the transaction commits (and states are
    /// kept now: see `observe`), of the table given last to `fold(against:)`.
    /// `storedBytes`: the size of the state's stored text, from which its memory is estimated.
    package func remember(_ no: String, _ model: (OrderState, Timestamp?), streamVersion: Int, storedBytes: Int = 0) {
        guard isKeeping, table != nil else { return }
        pending[no] = Entry(model: model, streamVersion: streamVersion, bytes: Self.weight(storedBytes: storedBytes))
    }

    package func commit() {
        for (no, entry) in pending {
            if (recent.count >= half || recentBytes + entry.bytes > maxBytes / 2) && recent[no] == nil { rotate() }
            if let replaced = recent.updateValue(entry, forKey: no) { recentBytes -= replaced.bytes }
            recentBytes += entry.bytes
        }
        pending.removeAll(keepingCapacity: true)
        usedInAttempt = false
        bypassed = false
    }

    /// The transaction rolled back (or its outcome is unknown): what it would have kept
    /// is dropped. Committed entries stay: a stream that did move fails their version check.
    /// Had it folded from entries, the next attempt folds from none (`bypassed`).
    package func rollBack() {
        pending.removeAll(keepingCapacity: true)
        bypassed = usedInAttempt
        usedInAttempt = false
    }

    /// Entries held, at most `capacity` (an order in both generations counts twice).
    package var count: Int { recent.count + older.count }

    /// Estimated memory of the newer generation's entries (the older one holds at most as much).
    package var newerBytes: Int { recentBytes }

    /// The newer generation becomes the older; the older one is freed off the writer's
    /// thread (hundreds of states), since this is on every batch's path.
    private func rotate() {
        let dropped = Forgotten(older)
        older = recent
        recent = [:]
        recentBytes = 0
        recent.reserveCapacity(half)
        if !dropped.entries.isEmpty { DispatchQueue.global(qos: .utility).async { dropped.drop() } }
    }

    /// Entries handed to another thread to be freed there. @unchecked Sendable: the
    /// writer gives them up entirely; only the releasing thread touches them after.
    private final class Forgotten: @unchecked Sendable {
        var entries: [String: Entry]
        init(_ entries: [String: Entry]) { self.entries = entries }
        func drop() { entries = [:] }
    }
}
