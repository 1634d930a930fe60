import LedgerCore
import LedgerPostgres

/// Each order's status after each of its events, folding in ledger order (an events
/// export's `status_after`). The states of the streams seen lately are kept with the
/// version folded last; an event that follows it (or starts its stream, version 1) needs
/// nothing more. Any other order stream is folded from its events before the batch,
/// read by `replay` (on a connection beside the export's, in its snapshot, with their
/// chain links checked), all of a batch's in one query.
///
/// At most `capacity` states are kept in memory: two generations, the older dropped whole
/// when the newer is half full, so the streams in use stay and memory stays bounded. The
/// dropped states of orders still waiting for their provider are set aside (`StateSpill`,
/// a temporary file), and when streams came back after theirs were dropped (at least 1 in
/// 100 of a generation's since the last drop: a ledger whose orders' events lie far
/// apart), every dropped state is; a stream seen again much later is read back from there
/// rather than folded again from the log. Where orders keep their events together and end
/// paid, nothing comes back, and nothing is written.
struct StatusTracker {
    /// Events below a position of some streams, by stream, their links checked.
    typealias Replay = (_ streams: [String], _ below: Int64) throws -> [String: [StoredEvent]]

    let capacity: Int
    private var recent: [String: Folded] = [:]
    private var older: [String: Folded] = [:]
    let spill = StateSpill()
    /// Streams met since the last drop that were in neither generation, past their first event.
    private var returns = 0

    /// A class: looking a stream's state up, keeping it and moving it between generations
    /// copies one reference, not every field of the state.
    private final class Folded {
        var state: OrderState
        /// The stream version folded last; nil when not known (a state folded from the log).
        var version: Int?

        init(state: OrderState, version: Int?) {
            self.state = state
            self.version = version
        }

        /// Whether an event of `version` comes right after what was folded (or continuity is not known).
        func isFollowed(byVersion next: Int) -> Bool { version.map { $0 + 1 == next } ?? true }
    }

    init(capacity: Int) { self.capacity = max(1, capacity) }

    /// Folds the order streams of `batch` that neither a kept state nor version 1 starts.
    mutating func prepare(for batch: [PeriodEvent], replay: Replay) throws {
        guard let first = batch.first?.head.position else { return }
        var started = Set<String>()   // streams that begin in the batch
        var missing: [String] = [], isMissing = Set<String>()
        for item in batch where item.head.stream.hasPrefix(MerchantOrderNo.streamPrefix) {
            let stream = item.head.stream, version = item.head.streamVersion
            if let known = folded(stream) {
                if known.isFollowed(byVersion: version) { continue }
            } else if version == 1 {
                started.insert(stream)
                continue
            } else if started.contains(stream) {
                continue
            }
            guard isMissing.insert(stream).inserted else { continue }
            if let known = returning(stream), known.isFollowed(byVersion: version) {
                keep(stream, known)
                continue
            }
            missing.append(stream)
        }
        guard !missing.isEmpty else { return }
        let earlier = try replay(missing, first)
        for stream in missing {
            guard let no = MerchantOrderNo(stream: stream) else { continue }
            let events = earlier[stream] ?? []
            keep(stream, Folded(state: OrderState.replay(no, try events.map(EventMapping.recorded)),
                                version: events.last?.streamVersion ?? 0))
        }
    }

    /// The order's status after `item`, nil for events of no order; `replay` folds a
    /// stream no kept state or version 1 starts. Rethrows why `item` cannot be read back.
    ///
    /// An order's history is the events of its own stream that name it, as replays read
    /// it (and as `ledger verify` and the reducer hold it): an event in another order's
    /// stream (only someone with the database's keys can write one) is in no order's
    /// history, so it has no status after it, and it only moves its stream's version on.
    mutating func after(_ item: PeriodEvent, replay: Replay) throws -> OrderStatus? {
        guard case .success(let recorded) = item.recorded else { _ = try item.recorded.get(); return nil }
        guard let no = recorded.event.merchantOrderNo else { return nil }
        let stream = item.head.stream, version = item.head.streamVersion
        guard Self.isOwnStream(stream, of: no) else {
            if let known = folded(stream), known.isFollowed(byVersion: version) { known.version = version }
            return nil
        }
        // The common case: the stream's state was kept in the newer generation; folded in place.
        if let known = recent[stream], known.isFollowed(byVersion: version) {
            return Self.fold(known, recorded, version)
        }
        let folded: Folded
        if let known = older[stream], known.isFollowed(byVersion: version) {
            folded = known
        } else if version == 1 {
            folded = Folded(state: OrderState.replay(no, []), version: nil)
        } else if let known = returning(stream), known.isFollowed(byVersion: version) {
            folded = known
        } else {
            let earlier = try replay([stream], item.head.position)[stream] ?? []
            folded = Folded(state: OrderState.replay(no, try earlier.map(EventMapping.recorded)), version: nil)
        }
        let status = Self.fold(folded, recorded, version)
        keep(stream, folded)
        return status
    }

    /// `stream == no.stream`, without making the latter.
    private static func isOwnStream(_ stream: String, of no: MerchantOrderNo) -> Bool {
        let prefix = MerchantOrderNo.streamPrefix.utf8
        let s = stream.utf8, value = no.value.utf8
        return s.count == prefix.count + value.count && s.starts(with: prefix) && s.dropFirst(prefix.count).elementsEqual(value)
    }

    private static func fold(_ folded: Folded, _ recorded: RecordedEvent, _ version: Int?) -> OrderStatus {
        OrderState.reduce(into: &folded.state, recorded)
        folded.version = version
        return folded.state.status
    }

    private func folded(_ stream: String) -> Folded? { recent[stream] ?? older[stream] }

    /// A stream met again that neither generation holds: counted, and read back if set aside.
    private mutating func returning(_ stream: String) -> Folded? {
        returns += 1
        // A state that does not read back is folded from the log instead.
        return (try? spill.load(stream)).map { Folded(state: $0.state, version: $0.marks.0 < 0 ? nil : Int($0.marks.0)) }
    }

    private mutating func keep(_ stream: String, _ folded: Folded) {
        let generation = (capacity + 1) / 2
        if recent[stream] == nil && recent.count >= generation {
            let setsAside = StateSpill.setsAside(returns: returns, generation: generation)
            for (stream, dropped) in older where setsAside(dropped.state) {
                spill.put(stream, dropped.state, marks: (Int64(dropped.version ?? -1), 0))
            }
            returns = 0
            older = recent
            recent = [:]
            recent.reserveCapacity(generation)
        }
        recent[stream] = folded
        if !older.isEmpty { older[stream] = nil }
        spill.forget(stream)
    }
}
