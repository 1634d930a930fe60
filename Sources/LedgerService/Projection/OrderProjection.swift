import LedgerCore
import LedgerPostgres
import Synchronization

/// Keeps the read models in the same transaction as the events they reflect:
/// for every order (or enrollment) touched by a batch, load its state, fold
/// the new events with the pure reducer, and save it.
///
/// Orders a batch starts (their stream's first event is in it) need no stored
/// state: `prepare` folds and renders them while PostgreSQL stores the events.
struct OrderProjection: BatchProjector {
    let orders = OrderReadModel()
    let enrollments = EnrollmentReadModel()
    /// States the writer committed last (`OrderStateCache`); nil: always load.
    let cache: OrderStateCache?
    /// Set when a transaction rolled back, cleared when one commits: see `apply`.
    let upsertEverything = UpsertSwitch()

    init(cache: OrderStateCache? = OrderStateCache()) {
        self.cache = cache
    }

    /// Whether the next batch upserts even the rows of orders it starts.
    final class UpsertSwitch: Sendable {
        private let on = Atomic<Bool>(false)
        var isOn: Bool { on.load(ordering: .relaxed) }
        func set(_ value: Bool) { on.store(value, ordering: .relaxed) }   // writer thread only
    }

    /// A batch's appended events by read model, and the rows of the orders that
    /// need no load, rendered.
    struct Plan: Sendable {
        var orderEvents: [(MerchantOrderNo, [RecordedEvent])] = []
        /// Orders whose stream this batch started: they have no stored state to load.
        var newOrders = Set<String>()
        /// Each order's stream version before and after this batch's events.
        var versions: [String: (first: Int, last: Int)] = [:]
        var enrollmentRefs: [String] = []
        var rendered: [String: OrderRow] = [:]
    }

    /// Folds and renders, while PostgreSQL stores the events, every order that needs no
    /// load: those the batch starts, and those the cache holds at the version before.
    func prepare(_ appended: [Item]) throws -> (any Sendable)? {
        var plan = try Self.plan(appended)
        var models: [(OrderState, Timestamp?)] = []
        for (no, events) in plan.orderEvents {
            var model: (OrderState, Timestamp?)
            if plan.newOrders.contains(no.value) {
                model = (OrderState(merchantOrderNo: no), nil)
            } else if let first = plan.versions[no.value]?.first, let cached = cache?.model(of: no.value, before: first) {
                model = cached
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

    func project(_ appended: [Item], prepared: (any Sendable)?, on c: PostgresConnection) throws {
        let plan = try (prepared as? Plan) ?? Self.plan(appended)
        let rows = try apply(plan.orderEvents, new: plan.newOrders, rendered: plan.rendered,
                             insertNew: !upsertEverything.isOn, deferSave: true, on: c)
        if let cache {
            for row in rows {
                if let last = plan.versions[row.state.merchantOrderNo.value]?.last {
                    cache.remember(row.state.merchantOrderNo.value, (row.state, row.paidRecordedAt), streamVersion: last)
                }
            }
        }
        for ref in plan.enrollmentRefs {
            let stored = try EventStore().read(stream: "enrollment-" + ref, on: c)
            try enrollments.save(EnrollmentState.replay(ref, stored.map(EventMapping.recorded)), on: c)
        }
    }

    func committed() {
        cache?.commit()
        upsertEverything.set(false)
    }

    /// Asks for one more attempt when this rollback is what switches plain inserts
    /// off: the batch may have failed only on a row that exists against expectation.
    func rolledBack() -> Bool {
        cache?.rollBack()
        let wasOn = upsertEverything.isOn
        upsertEverything.set(true)
        return !wasOn
    }

    /// Groups the appended events by order (in order of first appearance) and
    /// lists the enrollments touched.
    static func plan(_ appended: [Item]) throws -> Plan {
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
            } ?? EventMapping.recorded(new, receipt)
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
    /// events). Should one exist all the same (written by hand), the COPY fails,
    /// the transaction rolls back, and `rolledBack` makes the retry upsert everything.
    @discardableResult
    func apply(_ batch: [(MerchantOrderNo, [RecordedEvent])], new: Set<String> = [],
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
            try orders.insertNew(inserted, on: c)
            try orders.saveMany(upserted, deferred: deferSave, on: c)
        } else {
            try orders.saveMany(rows, deferred: deferSave, on: c)
        }
        return rows
    }

    /// One event into a read model: the reducer's state, and the export period
    /// key (when the first paid observation was recorded), which is set once.
    /// Live projection, rebuild and verify all fold through here.
    static func fold(_ model: inout (OrderState, Timestamp?), _ event: RecordedEvent) {
        OrderState.reduce(into: &model.0, event)
        if model.1 == nil && model.0.paid { model.1 = event.recordedAt }
    }
}
