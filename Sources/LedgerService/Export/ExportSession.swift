import Foundation
import LedgerCore
import LedgerPostgres

/// An export for accounting (exports.md): the orders first paid, or the events
/// recorded, in a half-open period on the ledger's recording time, read from one
/// snapshot a batch at a time and handed out as bytes, with a manifest.
///
/// Nothing is exported from a tampered log: every event an export shows or folds (into
/// `status_after`, or an order's state at the period's end) is checked with the chain
/// around it (`ChainLinks`), and a break stops the export with `ChainBreak`.
///
/// A closed period never changes: rows are chosen and computed by recording time
/// (an order's row is its state from the events recorded before `to`), and the
/// snapshot is taken only after every append in flight has committed, so no event
/// recorded before `to` can still commit after it.
///
/// Pulled, not pushed: `next()` returns the next chunk, so the CLI writes a file and
/// the HTTP server streams a body from the same code, each at its own pace. The
/// session owns its connection (its transaction spans the calls); closing it, or
/// dropping the session, ends the transaction.
package final class ExportSession {
    package let kind: ExportKind
    package let from: Timestamp
    package let to: Timestamp
    package let format: ExportFormat
    private let connection: PostgresConnection
    private var manifest: ExportManifest
    private var head: (position: Int64, hash: [UInt8]) = (0, [])
    private var statuses: StatusTracker
    private var state = Phase.fresh

    private enum Phase { case fresh, reading, done }

    /// Rows fetched a round trip at a time.
    package static let batchRows = 1_000
    /// Order streams whose state is kept between events of an events export.
    package static let defaultCachedStreams = 10_000
    package static let cursor = ExportCursor.name

    /// `cachedStreams`: how many order states an events export keeps (memory stays bounded).
    package init(kind: ExportKind, from: Timestamp, to: Timestamp, format: ExportFormat, connection: PostgresConnection,
         cachedStreams: Int = ExportSession.defaultCachedStreams) {
        statuses = StatusTracker(capacity: max(1, cachedStreams))
        self.kind = kind
        self.from = from
        self.to = to
        self.format = format
        self.connection = connection
        manifest = ExportManifest(kind: kind, from: from, to: to, format: format)
    }

    deinit { connection.close() }

    /// Rows written so far.
    package var rows: Int64 { manifest.rows }

    /// The next chunk of the file (the header first), or nil once every row was handed out.
    package func next() throws -> [UInt8]? {
        switch state {
        case .fresh:
            try begin()
            state = .reading
            let header = format.header(kind.columns)
            manifest.wrote(header)
            if !header.isEmpty { return header }
            return try next()
        case .reading:
            let rows = try fetchRows()
            guard !rows.isEmpty else {
                try finish()
                return nil
            }
            var out = [UInt8]()
            for row in rows {
                format.append(row.cells, columns: kind.columns, to: &out)
                manifest.counted(row)
            }
            manifest.wrote(out)
            return out
        case .done:
            return nil
        }
    }

    /// The manifest, once `next()` has returned nil.
    package func manifestJSON() -> JSONValue {
        precondition(state == .done, "the manifest is known only once every row was read")
        return manifest.json(ledgerHead: head, generatedAt: .now())
    }

    /// Runs the whole export, handing each chunk to `write`; returns the manifest.
    package func run(write: ([UInt8]) throws -> Void, progress: (Int64) -> Void = { _ in }) throws -> JSONValue {
        while let chunk = try next() {
            try write(chunk)
            progress(rows)
        }
        return manifestJSON()
    }

    // MARK: the transaction

    private func begin() throws {
        try ExportCursor().prepareSession(lockWaitSeconds: Self.lockWaitSeconds, on: connection)
        try waitUntilNoAppendCanRecordBeforeTo()
        try connection.beginSpanningTransaction("BEGIN ISOLATION LEVEL REPEATABLE READ, READ ONLY")
        head = try EventStore().head(on: connection)
        switch kind {
        case .orders: try OrderReadModel().declarePaid(from: from, to: to, cursor: Self.cursor, on: connection)
        case .events: try EventStore().declareRecorded(from: from, to: to, cursor: Self.cursor, on: connection)
        }
    }

    /// How long the export waits for the append lock (`ledger rebuild` holds it for its
    /// whole run) before it gives up.
    package static let lockWaitSeconds = 10

    /// Every append records its time under the append lock, or (when it skips a round
    /// trip) at most `EventStore.recordingLagLimitMicros` before it takes the lock. So once
    /// the lock was held at time L, every append still to commit records a time after
    /// L - lag. When `to` is at or before that, nothing can still land in the period; when
    /// the period ended only just now, the export waits out the lag and looks again. A
    /// period that has not ended yet is exported as it stands (it is not closed).
    private func waitUntilNoAppendCanRecordBeforeTo() throws {
        let lag = EventStore.recordingLagLimitMicros + 50_000
        while true {
            let lockedAt = try connection.transaction { try EventStore().appendLockTime(on: $0) }
            if to.microseconds <= lockedAt - lag || to.microseconds > lockedAt { return }
            let wait = to.microseconds + lag - lockedAt
            Thread.sleep(forTimeInterval: Double(wait) / 1_000_000)
        }
    }

    private func fetchRows() throws -> [ExportRow] {
        switch kind {
        case .orders:
            return try OrderReadModel().fetchStates(cursor: Self.cursor, count: Self.batchRows, on: connection)
                .map { ExportRow(order: try asOfPeriodEnd($0)) }
        case .events:
            let batch = try EventStore().fetch(cursor: Self.cursor, count: Self.batchRows, on: connection)
            try ChainLinks().require(batch, on: connection)
            try statuses.prepare(for: batch, on: connection)
            return try batch.map { stored in
                let recorded = try EventMapping.recorded(stored)
                return ExportRow(event: ExportedEvent(
                    position: stored.position, recordedAt: stored.recordedAt, observedAt: stored.observedAt,
                    stream: stored.stream, type: stored.type, source: stored.source, eventID: stored.eventID,
                    hash: stored.hash, event: recorded.event, statusAfter: try statuses.after(recorded, on: connection)))
            }
        }
    }

    /// The cursor is exhausted: the transaction ends and nothing more comes.
    private func finish() throws {
        try ExportCursor().close(on: connection)
        try connection.endSpanningTransaction()
        state = .done
    }

    /// The order as the ledger knew it at the end of the period: its stored state when no
    /// event was recorded since, else a replay of the events recorded before `to`.
    private func asOfPeriodEnd(_ state: OrderState) throws -> OrderState {
        guard let updated = state.updatedAt, updated.microseconds >= to.microseconds else { return state }
        let no = state.merchantOrderNo
        let known = try EventStore().readForReplay(stream: no.stream, recordedBefore: to, on: connection)
        try ChainLinks().require(known, on: connection)
        return OrderState.replay(no, try known.map(EventMapping.recorded))
    }

    /// Each order's status after each of its events, folding in ledger order: states are
    /// kept for the streams seen lately; the order streams of a batch not among them are
    /// folded from their events before the batch, all in one query (`prepare`).
    private struct StatusTracker {
        let capacity: Int
        var states: [String: OrderState] = [:]

        mutating func prepare(for batch: [StoredEvent], on c: PostgresConnection) throws {
            guard let first = batch.first?.position else { return }
            let orders = Set(batch.map(\.stream).filter { $0.hasPrefix(MerchantOrderNo.streamPrefix) })
            var missing = orders.filter { states[$0] == nil }
            guard !missing.isEmpty else { return }
            if states.count + missing.count > capacity {
                states.removeAll(keepingCapacity: true)   // memory stays bounded; the batch's orders are folded again
                missing = orders
            }
            let earlier = try EventStore().readForReplay(streams: Array(missing), below: first, on: c)
            try ChainLinks().require(earlier.values.flatMap { $0 }, on: c)
            for stream in missing {
                guard let no = MerchantOrderNo(stream: stream) else { continue }
                states[stream] = OrderState.replay(no, try (earlier[stream] ?? []).map(EventMapping.recorded))
            }
        }

        mutating func after(_ event: RecordedEvent, on c: PostgresConnection) throws -> OrderStatus? {
            guard let no = event.event.merchantOrderNo else { return nil }
            var state: OrderState
            if let known = states[no.stream] {
                state = known
            } else {
                // Not prepared (an event whose stream name does not say it is an order's).
                let earlier = try EventStore().readForReplay(stream: no.stream, below: event.position, on: c)
                try ChainLinks().require(earlier, on: c)
                state = OrderState.replay(no, try earlier.map(EventMapping.recorded))
            }
            OrderState.reduce(into: &state, event)
            states[no.stream] = state
            return state.status
        }
    }
}
