import LedgerCore
import LedgerPostgres

/// Each order's status after each of its events, folding in ledger order (an events
/// export's `status_after`). The states of the streams seen lately are kept with the
/// version folded last; an event that follows it (or starts its stream, version 1) needs
/// nothing more. Any other order stream is folded from its events before the batch,
/// read by `replay` (on a connection beside the export's, in its snapshot, with their
/// chain links checked), all of a batch's in one query.
///
/// At most `capacity` states are kept: two generations, the older dropped whole when the
/// newer is half full, so the streams in use stay and memory stays bounded.
struct StatusTracker {
    /// Events below a position of some streams, by stream, their links checked.
    typealias Replay = (_ streams: [String], _ below: Int64) throws -> [String: [StoredEvent]]

    let capacity: Int
    private var recent: [String: Folded] = [:]
    private var older: [String: Folded] = [:]

    private struct Folded {
        var state: OrderState
        /// The stream version folded last; nil when the event's stream is not its order's own.
        var version: Int?
    }

    init(capacity: Int) { self.capacity = max(1, capacity) }

    /// Folds the order streams of `batch` that neither a kept state nor version 1 starts.
    mutating func prepare(for batch: [StoredEvent], replay: Replay) throws {
        guard let first = batch.first?.position else { return }
        var seen = Set<String>()
        var missing: [String] = []
        for event in batch where event.stream.hasPrefix(MerchantOrderNo.streamPrefix) {
            guard seen.insert(event.stream).inserted else { continue }
            if let known = folded(event.stream), known.version.map({ $0 + 1 == event.streamVersion }) ?? true { continue }
            if event.streamVersion == 1 && folded(event.stream) == nil { continue }
            missing.append(event.stream)
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

    /// The order's status after `recorded` (`stored`'s canonical form), nil for events of
    /// no order; `replay` folds a stream no kept state or version 1 starts.
    mutating func after(_ recorded: RecordedEvent, stored: StoredEvent, replay: Replay) throws -> OrderStatus? {
        guard let no = recorded.event.merchantOrderNo else { return nil }
        let own = stored.stream == no.stream
        var state: OrderState
        if let known = folded(no.stream), !own || known.version.map({ $0 + 1 == stored.streamVersion }) ?? true {
            state = known.state
        } else if own && stored.streamVersion == 1 {
            state = OrderState.replay(no, [])
        } else {
            let earlier = try replay([no.stream], stored.position)[no.stream] ?? []
            state = OrderState.replay(no, try earlier.map(EventMapping.recorded))
        }
        OrderState.reduce(into: &state, recorded)
        keep(no.stream, Folded(state: state, version: own ? stored.streamVersion : nil))
        return state.status
    }

    private func folded(_ stream: String) -> Folded? { recent[stream] ?? older[stream] }

    private mutating func keep(_ stream: String, _ folded: Folded) {
        if recent[stream] == nil && recent.count >= (capacity + 1) / 2 {
            older = recent
            recent = [:]
            recent.reserveCapacity((capacity + 1) / 2)
        }
        recent[stream] = folded
        if older.count > 0 { older[stream] = nil }
    }
}
