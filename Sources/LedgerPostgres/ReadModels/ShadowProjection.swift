import LedgerCore

/// Folds verified events, in ledger order, into the shadow read models (`ShadowTables`),
/// for `ledger rebuild`.
///
/// The orders touched most recently stay in memory, folded, and go to the table only when
/// they fall out of the window (or at `flush`): an order whose events lie close together
/// in the log (an order's registration and its webhooks) is rendered and written once,
/// by binary COPY, whatever its number of events. An event for an order that fell out is
/// folded into its row as stored in the shadow (one load a page for all such orders),
/// and the row is written again by upsert. Memory is bounded by the window, not by the
/// ledger: two generations of at most `generation` orders each; when the newer fills up,
/// the older is written and dropped whole.
///
/// The orders it drops that still wait for their provider are set aside instead
/// (`StateSpill`, a temporary file), and all the orders it drops once orders come back
/// after they fell out (at least 1 in 100 of a generation's since the last drop: a ledger
/// whose orders' events lie far apart, as when payments follow registrations by days); an
/// order set aside is read back from there when it comes back, with no load from the
/// table, and `flush` writes what is still set aside, each order once. Where orders keep their
/// events together and end paid, nothing is set aside.
///
/// Enrollments (few, and small) stay in memory for the whole rebuild: `flush` writes
/// those changed since the last flush.
package final class ShadowProjection {
    /// A class: looking an order up, keeping it, moving it between generations and handing
    /// it to be written copies one reference, not every field of its state.
    private final class Open {
        var model: (OrderState, Timestamp?)
        /// Whether the shadow has a row for it (written earlier, or loaded from it).
        let stored: Bool

        init(model: (OrderState, Timestamp?), stored: Bool) {
            self.model = model
            self.stored = stored
        }
    }

    private let orders: OrderReadModel
    private let enrollmentRows = EnrollmentReadModel(table: ShadowTables.shadow("enrollments"))
    private let generation: Int
    private let pageSize: Int
    private var recent: [String: Open] = [:]
    private var older: [String: Open] = [:]
    private var page: [Item] = []
    private var enrollments: [String: EnrollmentState] = [:]
    private var changedEnrollments = Set<String>()
    /// Set once an order's event lies in another order's stream: its stream's first event
    /// then no longer proves that the order has no row, and every order out of the window is
    /// looked up. A projection that goes on from another's rows starts with the other's.
    package private(set) var sawForeignStream: Bool
    private let spill = StateSpill()
    /// Orders met since the last drop that were out of the window, past their first event.
    private var returns = 0

    /// Rows written so far, by COPY and by upsert.
    package private(set) var copiedRows = 0
    package private(set) var upsertedRows = 0
    /// Order states set aside, and read back.
    package var setAside: (written: Int, read: Int) { (spill.written, spill.read) }

    /// The calling thread's pacing, if any: when paced, the fold and the writes pause in
    /// short bursts (`DutyCycle`), and rows are rendered on this thread alone.
    private let duty: DutyCycle?

    /// `freeze`: the shadows were created in the transaction that writes (COPY FREEZE).
    /// `sawForeignStream`: the rows already in the shadows were folded from a log with an
    /// event in another order's stream (the build's, for the catch-up's projection).
    package init(generation: Int = 8192, pageSize: Int = 2000, freeze: Bool = false, duty: DutyCycle? = nil,
                 sawForeignStream: Bool = false) {
        self.sawForeignStream = sawForeignStream
        self.generation = max(1, generation)
        self.pageSize = max(1, pageSize)
        self.duty = duty
        orders = OrderReadModel(table: ShadowTables.shadow("orders"), freeze: freeze)
    }

    /// What the fold needs of a verified event: the event, and where it lies. Made on the
    /// thread that reads the log, so the stored event's storage is freed there.
    package struct Item: Sendable {
        let recorded: RecordedEvent
        let streamVersion: Int
        /// Whether the event lies in the stream of the order or enrollment it names.
        let inOwnStream: Bool

        package init(_ stored: StoredEvent, _ recorded: RecordedEvent) {
            self.init(stream: stored.stream, streamVersion: stored.streamVersion, recorded)
        }

        /// An event read in place (`EventCopyRow`) and its canonical form.
        package init(_ row: EventCopyRow, _ recorded: RecordedEvent) {
            self.init(stream: row.stream, streamVersion: Int(row.streamVersion), recorded)
        }

        private init(stream: String, streamVersion: Int, _ recorded: RecordedEvent) {
            self.recorded = recorded
            self.streamVersion = streamVersion
            let (prefix, name): (String, String?) = switch recorded.event {
            case .enrollment(let e): ("enrollment-", e.enrollmentRef)
            default: ("order-", recorded.event.merchantOrderNo?.value)
            }
            inOwnStream = name.map { stream.utf8.count == prefix.utf8.count + $0.utf8.count
                && stream.hasPrefix(prefix) && stream.hasSuffix($0) } ?? true
        }
    }

    /// Folds one verified event (in ledger order); writes, through `c`, what falls out of the window.
    package func add(_ item: Item, on c: PostgresConnection) throws {
        page.append(item)
        if page.count >= pageSize { try foldPage(on: c) }
    }

    /// Writes everything held: the page, every order in the window, the changed enrollments.
    /// Afterwards the shadows hold the fold of every event added.
    package func flush(on c: PostgresConnection) throws {
        try foldPage(on: c)
        try write(Array(older.values) + Array(recent.values), on: c)
        older = [:]
        recent = [:]
        var aside: [Open] = []
        try spill.drain { _, state, marks in
            aside.append(Self.open(state, marks))
            if aside.count == Self.writeChunk {
                try write(aside, on: c)
                aside.removeAll(keepingCapacity: true)
            }
        }
        try write(aside, on: c)
        returns = 0
        for ref in changedEnrollments.sorted() {
            if let state = enrollments[ref] { try enrollmentRows.save(state, on: c) }
        }
        changedEnrollments = []
    }

    /// What the enrollments and the window hold, to be set back when a transaction that wrote
    /// from them rolls back (`restore`). Taken after a `flush`, it is the enrollments alone.
    package struct Memory {
        fileprivate var enrollments: [String: EnrollmentState]
        fileprivate var changed: Set<String>
    }

    package var memory: Memory {
        precondition(page.isEmpty && recent.isEmpty && older.isEmpty && spill.isEmpty, "take the memory after a flush")
        return Memory(enrollments: enrollments, changed: changedEnrollments)
    }

    package func restore(_ memory: Memory) {
        page = []
        recent = [:]
        older = [:]
        spill.reset()
        returns = 0
        enrollments = memory.enrollments
        changedEnrollments = memory.changed
    }

    private func foldPage(on c: PostgresConnection) throws {
        guard !page.isEmpty else { return }
        // The orders this page continues that are out of the window: loaded in one query.
        // Those set aside are read back from the spill.
        var missing: [MerchantOrderNo] = []
        var seen = Set<String>()
        var back: [String: Open] = [:]
        for item in page {
            guard let no = item.recorded.event.merchantOrderNo else { continue }
            if !item.inOwnStream { sawForeignStream = true }
            guard seen.insert(no.value).inserted, recent[no.value] == nil, older[no.value] == nil else { continue }
            guard item.streamVersion > 1 || sawForeignStream else { continue }
            if item.streamVersion > 1 { returns += 1 }
            if let (state, marks) = try spill.load(no.value) {
                back[no.value] = Self.open(state, marks)
            } else {
                missing.append(no)
            }
        }
        let loaded = try orders.loadMany(missing, on: c)
        for item in page {
            duty?.step()
            let recorded = item.recorded
            if let no = recorded.event.merchantOrderNo {
                if let open = recent[no.value] {
                    OrderProjection.fold(&open.model, recorded)   // in place
                    continue
                }
                let open = older.removeValue(forKey: no.value) ?? back[no.value]
                    ?? loaded[no.value].map { Open(model: $0, stored: true) }
                    ?? Open(model: (OrderState(merchantOrderNo: no), nil), stored: false)
                OrderProjection.fold(&open.model, recorded)
                recent[no.value] = open
            } else if case .enrollment(let e) = recorded.event {
                // As the live projection replays it: the enrollment's own stream, in order.
                var state = enrollments[e.enrollmentRef] ?? EnrollmentState(enrollmentRef: e.enrollmentRef)
                if item.inOwnStream { state = EnrollmentState.reduce(state, recorded) }
                enrollments[e.enrollmentRef] = state
                changedEnrollments.insert(e.enrollmentRef)
            }
        }
        page.removeAll(keepingCapacity: true)
        if recent.count >= generation {
            try drop(older, on: c)
            older = recent
            recent = [:]
            recent.reserveCapacity(generation)
        }
    }

    /// Writes a dropped generation, but for the orders set aside: those still waiting for
    /// their provider, or all of them when orders came back (those the spill refuses are written).
    private func drop(_ dropped: [String: Open], on c: PostgresConnection) throws {
        defer { returns = 0 }
        let setsAside = StateSpill.setsAside(returns: returns, generation: generation)
        var written: [Open] = []
        for (name, open) in dropped {
            if setsAside(open.model.0) {
                duty?.step()
                let marks = (open.model.1?.microseconds ?? Self.noTime, Int64(open.stored ? 1 : 0))
                if spill.put(name, open.model.0, marks: marks) { continue }
            }
            written.append(open)
        }
        try write(written, on: c)
    }

    /// An order's state as set aside: its paid time (or `noTime`) and whether its row is stored.
    private static func open(_ state: OrderState, _ marks: StateSpill.Marks) -> Open {
        Open(model: (state, marks.0 == noTime ? nil : Timestamp(microseconds: marks.0)), stored: marks.1 == 1)
    }

    private static let noTime = Int64.min
    private static let writeChunk = 4096

    /// Renders and writes orders: new rows by COPY, the others by upsert. Paced, a chunk
    /// is rendered on this thread alone with its pauses (not across the cores), its COPY
    /// goes out in pieces, and its upserts 64 rows a statement.
    private func write(_ open: [Open], on c: PostgresConnection) throws {
        let paced = duty?.isPaced ?? false
        for chunk in stride(from: 0, to: open.count, by: Self.writeChunk) {
            let part = open[chunk..<min(open.count, chunk + Self.writeChunk)]
            let rows = paced
                ? part.map { entry in duty?.step(); return OrderRow(entry.model) }
                : OrderReadModel.render(part.map(\.model))
            var new: [OrderRow] = [], existing: [OrderRow] = []
            for (row, entry) in zip(rows, part) {
                if entry.stored { existing.append(row) } else { new.append(row) }
            }
            try orders.insertNew(new, duty: duty, on: c)
            let statement = paced ? 64 : max(1, existing.count)
            for first in stride(from: 0, to: existing.count, by: statement) {
                try orders.saveMany(Array(existing[first..<min(existing.count, first + statement)]), on: c)
                duty?.step()
            }
            copiedRows += new.count
            upsertedRows += existing.count
        }
    }
}
