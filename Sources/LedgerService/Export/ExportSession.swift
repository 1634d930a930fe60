import Foundation
import LedgerCore
import LedgerPostgres

/// An export for accounting (exports.md): the orders first paid, or the events
/// recorded, in a half-open period on the ledger's recording time, read from one
/// snapshot a batch at a time and handed out as bytes, with a manifest.
///
/// Nothing is exported from a tampered log: every event an export shows or folds (into
/// `status_after`, or an order's state at the period's end) is checked with the chain
/// around it (its links to both neighbours: `ChainRunCheck` on the rows as they stream,
/// `ChainLinks` on what is read beside them), and a break stops the export with
/// `ChainBreak`.
///
/// A closed period never changes: rows are chosen and computed by recording time
/// (an order's row is its state from the events recorded before `to`), and the
/// snapshot is taken only after every append in flight has committed, so no event
/// recorded before `to` can still commit after it.
///
/// The rows stream with one binary COPY, read on a thread of their own (`ReadingThread`):
/// the session folds and formats a batch of events while that thread reads and checks
/// the next; the orders are formatted on that thread, most straight from the COPY's
/// bytes, and the session only hashes and hands out each chunk. What must be read beside
/// them while the COPY runs (an order's events folded again) goes through a second
/// connection, opened only when needed, that reads the same snapshot (`SharedSnapshot`).
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
    /// The events export's order statuses, folded as the batches are formatted.
    private var statuses: StatusTracker
    private var state = Phase.fresh
    private var events: ReadingThread<PeriodEvent>?
    private var orders: ReadingThread<FormattedRows>?
    /// The orders export's rows as counted on the reading thread, where they are formatted.
    private let orderCounts = OrderCounts()
    /// The orders export's rows handed out so far.
    private var orderRows: Int64 = 0
    private var beside: BesideReads?
    /// The period's first position: from it on, the events scan checks every link itself.
    private var checkedRunStart = Int64.max

    /// Order states an events export set aside in its temporary file, and read back.
    package var statesSetAside: (written: Int, read: Int) { (statuses.spill.written, statuses.spill.read) }
    private var writer: ExportRowWriter

    private enum Phase { case fresh, reading, done }

    /// Rows handed from the reading thread a batch at a time (each batch is one chunk).
    /// Small: up to five batches are alive at once (three waiting, one being filled, one
    /// being folded), and an events export of 1,000,000 rows from the middle of a log
    /// peaked at 66-67 MB with batches of 1,000 against 53-54 MB with these.
    package static let batchRows = 250
    /// Order streams whose state is kept between events of an events export.
    package static let defaultCachedStreams = 4_096

    /// With a key, the check that the stored notes still match the log, made in the
    /// export's snapshot before its manifest's `checkpoint` is signed over `ledgerHead`.
    private let newestNote: NewestNoteCheck?

    /// `cachedStreams`: how many order states an events export keeps (memory stays bounded).
    /// `newestNote`: given when the manifest will be signed (`CheckpointSigner.newestNote`).
    package init(kind: ExportKind, from: Timestamp, to: Timestamp, format: ExportFormat, connection: PostgresConnection,
         cachedStreams: Int = ExportSession.defaultCachedStreams, newestNote: NewestNoteCheck? = nil) {
        self.newestNote = newestNote
        statuses = StatusTracker(capacity: cachedStreams)
        self.kind = kind
        self.from = from
        self.to = to
        self.format = format
        self.connection = connection
        manifest = ExportManifest(kind: kind, from: from, to: to, format: format)
        writer = ExportRowWriter(format: format, columns: kind.columns)
    }

    deinit {
        // The reading thread lets go of the connection before it closes.
        events?.stop()
        orders?.stop()
        beside?.close()
        connection.close()
    }

    /// Rows written so far.
    package var rows: Int64 { kind == .orders ? orderRows : manifest.rows }

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
            guard let out = try nextChunk() else {
                try finish()
                return nil
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
        if kind == .orders {
            // Before the snapshot is taken (a LOCK takes none): a rebuild's swap then either
            // finished before it or waits for the export. Otherwise the export could read the
            // swapped-in table with an older snapshot, missing rows its catch-up wrote.
            try connection.query("LOCK TABLE ledger.orders IN ACCESS SHARE MODE")
        }
        head = try EventStore().head(on: connection)
        if let anchored = try newestNote?.run(on: connection), let note = anchored.note,
           anchored.head != head.position || anchored.headHash != head.hash {
            throw CheckpointError.noteContradicted(position: note.position,
                                                   found: "the chain walked from it ends at \(anchored.head), the head is \(head.position)")
        }
        let snapshot = try SharedSnapshot.export(from: connection)
        beside = BesideReads(snapshot: snapshot, connectionString: connection.connectionString)
        let connection = self.connection, batchRows = Self.batchRows
        switch kind {
        case .orders:
            // The rows are formatted on the reading thread, most straight from the COPY's bytes,
            // and counted there; the session hashes each chunk and hands it out.
            let scan = PaidOrderScan(from: from, to: to)
            let (beside, from, to, format, counts) = (self.beside!, self.from, self.to, self.format, self.orderCounts)
            orders = ReadingThread { put in
                var writer = ExportRowWriter(format: format, columns: ExportKind.orders.columns)
                var tally = ExportManifest(kind: .orders, from: from, to: to, format: format)
                var inChunk: Int64 = 0
                try scan.scan(on: connection) { row in
                    if try !PaidOrderScan.write(row, updatedBefore: to, to: &writer, counting: &tally) {
                        let order = try Self.orderAtPeriodEnd(try PaidOrderScan.row(row), to: to, beside: beside)
                        order.write(to: &writer)
                        order.count(in: &tally)
                    }
                    inChunk += 1
                    if inChunk == batchRows {
                        try put([FormattedRows(bytes: writer.take(), rows: inChunk)])
                        inChunk = 0
                    }
                }
                if inChunk > 0 { try put([FormattedRows(bytes: writer.take(), rows: inChunk)]) }
                counts.manifest = tally
            }
        case .events:
            let scan = PeriodEventScan(from: from, to: to)
            guard let period = try scan.bounds(on: connection) else { return }
            checkedRunStart = period.lowerBound
            let head = self.head.position
            // This thread reads, checks the chain and makes each event's canonical form; the
            // session folds each batch's statuses and formats it while the next is read.
            events = ReadingThread { put in
                var batch = Batches<PeriodEvent>(size: batchRows, put: put)
                var links = ChainRunCheck(period: period, head: head)
                // An event goes out once the link after it held too.
                var held: PeriodEvent?
                try scan.run(period, on: connection) { event, inPeriod in
                    try links.check(event)
                    // The event before the period only anchors the run: its own hash is not
                    // checked here, so it is not folded from here either (its order's state
                    // comes from its events read beside, their links checked there).
                    guard event.position >= period.lowerBound else { return }
                    if let held { try batch.add(held) }
                    held = PeriodEvent(event, inPeriod: inPeriod)
                }
                try links.finish()
                if let held { try batch.add(held) }
                try batch.flush()
            }
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

    /// The next chunk of rows, counted in the manifest; nil at the end.
    private func nextChunk() throws -> [UInt8]? {
        switch kind {
        case .orders:
            guard let batch = try orders?.next() else { return nil }
            orderRows += batch.reduce(0) { $0 + $1.rows }
            return batch.count == 1 ? batch[0].bytes : batch.flatMap(\.bytes)
        case .events:
            guard let batch = try events?.next() else { return nil }
            let beside = self.beside!, checkedFrom = checkedRunStart
            // A batch comes once the reading thread checked its links and all before it.
            let replay: StatusTracker.Replay = { streams, below in
                try beside.earlierEvents(of: streams, below: below, checkedFrom: checkedFrom)
            }
            try statuses.prepare(for: batch, replay: replay)
            for item in batch {
                // Events of the run recorded outside the period are folded, not shown.
                let statusAfter = try statuses.after(item, replay: replay)
                guard item.inPeriod else { continue }
                let event = ExportedEvent(
                    position: item.head.position, recordedAt: item.head.recordedAt, observedAt: item.head.observedAt,
                    stream: item.head.stream, type: item.head.type, source: item.head.source,
                    eventID: item.head.eventID, hash: item.head.hash, event: try item.recorded.get().event,
                    statusAfter: statusAfter)
                event.write(to: &writer)
                event.count(in: &manifest)
            }
            return writer.take()
        }
    }

    /// Every row was read: the transaction ends and nothing more comes.
    private func finish() throws {
        events?.stop()
        orders?.stop()
        if kind == .orders, let counted = orderCounts.manifest { manifest.takeCounts(of: counted) }
        beside?.close()
        try connection.endSpanningTransaction()
        state = .done
    }

    /// The order of a row as the ledger knew it at the end of the period (`to`): as stored
    /// when no event was recorded since, else a replay of its events recorded before `to`.
    private static func orderAtPeriodEnd(_ row: PaidOrderScan.Row, to: Timestamp, beside: BesideReads) throws -> ExportedOrder {
        func replayed(_ no: MerchantOrderNo) throws -> ExportedOrder {
            let known = try beside.events(of: no.stream, recordedBefore: to)
            return ExportedOrder(OrderState.replay(no, try known.map(EventMapping.recorded)))
        }
        switch row {
        case .state(let state):
            guard let updated = state.updatedAt, updated.microseconds >= to.microseconds else { return ExportedOrder(state) }
            return try replayed(state.merchantOrderNo)
        case .fields(let fields, let updatedAt):
            return updatedAt.microseconds < to.microseconds ? fields : try replayed(try MerchantOrderNo(stored: fields.merchantOrderNo))
        }
    }
}

/// A chunk of an orders export's file, formatted on the reading thread, and its row count.
struct FormattedRows: Sendable {
    let bytes: [UInt8]
    let rows: Int64
}

/// The orders export's manifest as counted on its reading thread: written there once the
/// last row was, read by the session only after that thread has ended.
private final class OrderCounts: @unchecked Sendable {
    var manifest: ExportManifest?
}

/// An event of the run an events export reads, its canonical form (made on the reading
/// thread; a failure is the export's when it comes to the event), and whether it was
/// recorded in the period. A class: batches pass it on without copying its many fields.
final class PeriodEvent: Sendable {
    let head: EventHead
    let recorded: Result<RecordedEvent, Error>
    let inPeriod: Bool

    init(_ row: EventCopyRow, inPeriod: Bool) {
        head = EventHead(row)
        recorded = Result { try row.recorded() }
        self.inPeriod = inPeriod
    }
}

/// Items gathered into batches of `size` for a `ReadingThread`.
private struct Batches<Item: Sendable> {
    let size: Int
    let put: ([Item]) throws -> Void
    private var items: [Item] = []

    init(size: Int, put: @escaping ([Item]) throws -> Void) {
        self.size = size
        self.put = put
        items.reserveCapacity(size)
    }

    mutating func add(_ item: Item) throws {
        items.append(item)
        if items.count >= size { try flush() }
    }

    mutating func flush() throws {
        guard !items.isEmpty else { return }
        try put(items)
        items = []
        items.reserveCapacity(size)
    }
}
