import LedgerCore
import LedgerPostgres

/// An export for accounting (exports.md): the orders first paid, or the events
/// recorded, in a half-open period on the ledger's recording time, written as
/// they are read from one snapshot, with a manifest.
///
/// A closed period never changes: rows are chosen and computed by recording time
/// (an order's row is its state from the events recorded before `to`), and the
/// snapshot is taken only after every append in flight has committed, so no event
/// recorded before `to` can still commit after it.
struct Exporter {
    let kind: ExportKind
    let from: Timestamp
    let to: Timestamp
    let format: ExportFormat

    /// How many bytes are gathered before `write` is called.
    static let chunkBytes = 64 * 1024
    /// Order streams whose state is kept between events of an events export.
    static let cachedStreams = 10_000

    /// Writes the file's bytes to `write`, chunk by chunk; `progress` hears the rows so far
    /// after each chunk. Returns the manifest.
    func run(on c: PostgresConnection, write: ([UInt8]) throws -> Void,
             progress: (Int64) -> Void = { _ in }) throws -> JSONValue {
        // Every append takes this lock and records its time once it holds it: after taking
        // and releasing it, no append still in flight has a recording time before now.
        try c.transaction { try $0.query("SELECT pg_advisory_xact_lock(7413001)") }
        return try c.transaction { c in
            try c.query("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
            let head = try EventStore().head(on: c)
            var manifest = ExportManifest(kind: kind, from: from, to: to, format: format)
            var buffer = format.header(kind.columns)
            func emit(_ rows: [ExportRow]) throws {
                for row in rows {
                    format.append(row.cells, columns: kind.columns, to: &buffer)
                    manifest.counted(row)
                }
                if buffer.count >= Self.chunkBytes { try flush() }
            }
            func flush() throws {
                guard !buffer.isEmpty else { return }
                manifest.wrote(buffer)
                try write(buffer)
                buffer.removeAll(keepingCapacity: true)
                progress(manifest.rows)
            }
            switch kind {
            case .orders:
                try OrderReadModel().forEachPaid(from: from, to: to, on: c) { states in
                    try emit(try states.map { ExportRow(order: try asOfPeriodEnd($0, on: c)) })
                }
            case .events:
                var statuses = StatusTracker()
                try EventStore().forEachRecorded(from: from, to: to, on: c) { events in
                    try emit(try events.map { stored in
                        let recorded = try EventMapping.recorded(stored)
                        return ExportRow(event: ExportedEvent(
                            position: stored.position, recordedAt: stored.recordedAt, observedAt: stored.observedAt,
                            stream: stored.stream, type: stored.type, source: stored.source, eventID: stored.eventID,
                            hash: stored.hash, event: recorded.event, statusAfter: try statuses.after(recorded, on: c)))
                    })
                }
            }
            try flush()
            return manifest.json(ledgerHead: head, generatedAt: .now())
        }
    }

    /// The order as the ledger knew it at the end of the period: its stored state when no
    /// event was recorded since, else a replay of the events recorded before `to`.
    private func asOfPeriodEnd(_ state: OrderState, on c: PostgresConnection) throws -> OrderState {
        guard let updated = state.updatedAt, updated.microseconds >= to.microseconds else { return state }
        let no = state.merchantOrderNo
        let known = try EventStore().read(stream: no.stream, on: c).filter { $0.recordedAt.microseconds < to.microseconds }
        return OrderState.replay(no, try known.map(EventMapping.recorded))
    }

    /// Each order's status after each of its events, folding in ledger order: states are
    /// kept for the streams seen lately, and a stream met for the first time (or again
    /// after the cache was emptied) is folded from its earlier events.
    private struct StatusTracker {
        var states: [String: OrderState] = [:]

        mutating func after(_ event: RecordedEvent, on c: PostgresConnection) throws -> OrderStatus? {
            guard let no = event.event.merchantOrderNo else { return nil }
            var state: OrderState
            if let known = states[no.stream] {
                state = known
            } else {
                let earlier = try EventStore().read(stream: no.stream, on: c).filter { $0.position < event.position }
                state = OrderState.replay(no, try earlier.map(EventMapping.recorded))
                if states.count >= Exporter.cachedStreams { states.removeAll(keepingCapacity: true) }
            }
            OrderState.reduce(into: &state, event)
            states[no.stream] = state
            return state.status
        }
    }
}
