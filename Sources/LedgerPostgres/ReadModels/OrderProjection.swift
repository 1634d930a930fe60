import LedgerCore
import Synchronization

/// Keeps the read models in the same transaction as the events they reflect:
/// for every order (or enrollment) touched by a batch, load its state, fold
/// the new events with the pure reducer, and save it.
///
/// Orders a batch starts (their stream's first event is in it) need no stored
/// state: `prepare` folds and renders them while PostgreSQL stores the events.
package struct OrderProjection: BatchProjector {
    package let orders = OrderReadModel()
    package let enrollments = EnrollmentReadModel()
    /// States the writer committed last (`OrderStateCache`); nil: always load.
    package let cache: OrderStateCache?
    /// How the rows of orders a batch starts are saved: see `apply`.
    package let newRows = NewRowMode()

    package init(cache: OrderStateCache? = OrderStateCache()) {
        self.cache = cache
    }

    /// Whether the next batch upserts even the rows of orders it starts, and whether
    /// the last COPY of such rows was refused. Touched by the writer thread only.
    package final class NewRowMode: Sendable {
        private let upsert = Atomic<Bool>(false)
        private let refused = Atomic<Bool>(false)
        var upsertsEverything: Bool { upsert.load(ordering: .relaxed) }
        func setUpsertsEverything(_ value: Bool) { upsert.store(value, ordering: .relaxed) }
        /// The COPY met a row that exists (a unique violation on the order's key).
        func copyRefused() { refused.store(true, ordering: .relaxed) }
        /// Whether the COPY was refused since the last call.
        func takeRefusal() -> Bool { refused.exchange(false, ordering: .relaxed) }
    }

    /// A batch's appended events by read model, and the rows of the orders that
    /// need no load, rendered.
    package struct Plan: Sendable {
        var orderEvents: [(MerchantOrderNo, [RecordedEvent])] = []
        /// Orders whose stream this batch started: they have no stored state to load.
        var newOrders = Set<String>()
        /// Each order's stream version before and after this batch's events.
        var versions: [String: (first: Int, last: Int)] = [:]
        var enrollmentRefs: [String] = []
        var rendered: [String: OrderRow] = [:]
        /// The table the cached states folded into `rendered` are of; nil when none was used.
        var cachedFrom: UInt32?
    }

    /// Folds and renders, while PostgreSQL stores the events, every order that needs no
    /// load: those the batch starts, and those the cache holds at the version before.
    package func prepare(_ appended: [Item]) throws -> (any Sendable)? {
        var plan = try Self.plan(appended)
        var models: [(OrderState, Timestamp?)] = []
        for (no, events) in plan.orderEvents {
            var model: (OrderState, Timestamp?)
            if plan.newOrders.contains(no.value) {
                model = (OrderState(merchantOrderNo: no), nil)
            } else if let first = plan.versions[no.value]?.first, let cached = cache?.model(of: no.value, before: first) {
                model = cached
                plan.cachedFrom = cache?.table
            } else {
                continue
            }
            for event in events { Self.fold(&model, event) }
            models.append(model)
        }
        let rows = OrderReadModel.render(models)
        plan.rendered.reserveCapacity(rows.count)
        for row in rows { plan.rendered[row.state.merchantOrderNo.value] = row }
        return plan
    }

    package func project(_ appended: [Item], prepared: (any Sendable)?, on c: PostgresConnection) throws {
        let plan = try (prepared as? Plan) ?? Self.plan(appended)
        cache?.observe(orders: plan.orderEvents.count, new: plan.newOrders.count)
        if let table = plan.cachedFrom {
            // Rows folded from remembered states: the commit fails (LG001) unless they are of the live table.
            try c.deferUntilCommit(Self.tableCheckSQL, [.int(Int64(table))], prepared: true)
        }
        let rows = try apply(plan.orderEvents, new: plan.newOrders, rendered: plan.rendered,
                             insertNew: !newRows.upsertsEverything, deferSave: true, on: c)
        if let cache, cache.isKeeping {
            if cache.table == nil {
                // Once, and again after a swap: the table the states kept from now on are of.
                cache.fold(against: try Self.liveTable(on: c))
            }
            for row in rows {
                if let last = plan.versions[row.state.merchantOrderNo.value]?.last {
                    cache.remember(row.state.merchantOrderNo.value, (row.state, row.paidRecordedAt), streamVersion: last,
                                   storedBytes: row.stateText.count)
                }
            }
        }
        for ref in plan.enrollmentRefs {
            let stored = try EventStore().read(stream: "enrollment-" + ref, on: c)
            try enrollments.save(EnrollmentState.replay(ref, stored.map(EventMapping.recorded)), on: c)
        }
    }

    package func committed() {
        cache?.commit()
        newRows.setUpsertsEverything(false)
    }

    /// Asks for one more attempt, with upserts for every row, only when the COPY of new
    /// orders' rows met a row that exists: any other failure takes the committer's
    /// usual course (and a lasting fault in the COPY path fails loudly, not quietly
    /// through the upsert).
    package func rolledBack(_ error: any Error) -> Bool {
        cache?.rollBack()
        if let error = error as? PostgresError, error.sqlState == Self.tableSwapped {
            // A rebuild swapped ledger.orders: the batch again, from the new table's rows.
            cache?.forgetAll()
            return true
        }
        guard newRows.takeRefusal() else { return false }
        newRows.setUpsertsEverything(true)
        return true
    }

    /// `ledger.orders_table_is` (Migrations/032): fails the commit with `tableSwapped`
    /// unless ledger.orders is the table of the given OID.
    static let tableCheckSQL = "SELECT ledger.orders_table_is($1::oid)"
    static let tableSwapped = "LG001"

    /// The OID of the live ledger.orders.
    static func liveTable(on c: PostgresConnection) throws -> UInt32 {
        let oid = try c.query("SELECT 'ledger.orders'::regclass::oid::bigint AS oid", [], prepared: true).int64(0, "oid")
        guard let table = UInt32(exactly: oid) else { throw PostgresError.unexpectedResult("ledger.orders' OID \(oid) is not an OID") }
        return table
    }

    /// Groups the appended events by order (in order of first appearance) and
    /// lists the enrollments touched.
    package static func plan(_ appended: [Item]) throws -> Plan {
        var plan = Plan()
        var indexByOrder: [String: Int] = [:]
        indexByOrder.reserveCapacity(appended.count)
        plan.versions.reserveCapacity(appended.count)
        plan.orderEvents.reserveCapacity(appended.count)
        for (new, attachment, outcome) in appended {
            guard case .appended(let receipt) = outcome else { continue }
            // The submitter attaches the parsed event; parse the payload only when it did not.
            let recorded = try (attachment as? LedgerEvent).map {
                RecordedEvent(event: $0, position: receipt.position, recordedAt: receipt.recordedAt)
            } ?? EventMapping.recorded(new.event, receipt)
            if let no = recorded.event.merchantOrderNo {
                if let i = indexByOrder[no.value] {
                    plan.orderEvents[i].1.append(recorded)
                    plan.versions[no.value]?.last = receipt.streamVersion
                } else {
                    indexByOrder[no.value] = plan.orderEvents.count
                    plan.orderEvents.append((no, [recorded]))
                    plan.versions[no.value] = (receipt.streamVersion, receipt.streamVersion)
                    if receipt.streamVersion == 1 { plan.newOrders.insert(no.value) }
                }
            } else if case .enrollment(let e) = recorded.event, !plan.enrollmentRefs.contains(e.enrollmentRef) {
                plan.enrollmentRefs.append(e.enrollmentRef)
            }
        }
        return plan
    }

    /// Folds each order's new events into its stored state and saves them all:
    /// one query to load, one to save, whatever the batch size. Orders in `new`
    /// start from the empty state without a load (events are the source of
    /// truth, and the save is an upsert either way); those in `rendered` are
    /// already folded and rendered. With `deferSave` the save goes out with the
    /// transaction's COMMIT, in one round trip (nothing may read these orders
    /// in the same transaction afterwards).
    ///
    /// With `insertNew`, the rows of orders in `new` are stored with COPY (at once, not
    /// deferred), which skips the upsert's conflict check: a stream's first event is in this
    /// transaction, so no row can hold its order (rows are written only here, from
    /// events). Should one exist all the same (written by hand), the COPY fails with a
    /// unique violation, the transaction rolls back, and `rolledBack` asks for the
    /// batch once more with upserts for everything.
    @discardableResult
    package func apply(_ batch: [(MerchantOrderNo, [RecordedEvent])], new: Set<String> = [],
               rendered: [String: OrderRow] = [:], insertNew: Bool = false, deferSave: Bool = false,
               on c: PostgresConnection) throws -> [OrderRow] {
        let toLoad = batch.map(\.0).filter { !new.contains($0.value) && rendered[$0.value] == nil }
        let stored = toLoad.isEmpty ? [:] : try orders.loadMany(toLoad, on: c)
        var rows: [OrderRow] = []
        rows.reserveCapacity(batch.count)
        var models: [(OrderState, Timestamp?)] = []
        for (no, events) in batch {
            if let row = rendered[no.value] {
                rows.append(row)
                continue
            }
            var model = stored[no.value] ?? (OrderState(merchantOrderNo: no), nil)
            for event in events { Self.fold(&model, event) }
            models.append(model)
        }
        rows += OrderReadModel.render(models)
        if insertNew && !new.isEmpty {
            var inserted: [OrderRow] = [], upserted: [OrderRow] = []
            for row in rows {
                if new.contains(row.state.merchantOrderNo.value) { inserted.append(row) } else { upserted.append(row) }
            }
            do {
                try orders.insertNew(inserted, on: c)
            } catch let error as PostgresError where error.sqlState == "23505" {
                newRows.copyRefused()   // orders_pkey is the table's one unique index
                throw error
            }
            try orders.saveMany(upserted, deferred: deferSave, on: c)
        } else {
            try orders.saveMany(rows, deferred: deferSave, on: c)
        }
        return rows
    }

    /// One event into a read model: the reducer's state, and the export period
    /// key (when the first paid observation was recorded), which is set once.
    /// Live projection, rebuild and verify all fold through here.
    package static func fold(_ model: inout (OrderState, Timestamp?), _ event: RecordedEvent) {
        OrderState.reduce(into: &model.0, event)
        if model.1 == nil && model.0.paid { model.1 = event.recordedAt }
    }
}
