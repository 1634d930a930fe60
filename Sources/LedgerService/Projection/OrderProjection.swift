import LedgerCore
import LedgerPostgres

/// Keeps the read models in the same transaction as the events they reflect:
/// for every order (or enrollment) touched by a batch, load its state, fold
/// the new events with the pure reducer, and save it.
struct OrderProjection: BatchProjector {
    let orders = OrderReadModel()
    let enrollments = EnrollmentReadModel()

    func project(_ appended: [(event: NewEvent, attachment: (any Sendable)?, outcome: AppendOutcome)],
                 on c: PostgresConnection) throws {
        var orderEvents: [(MerchantOrderNo, [RecordedEvent])] = []
        // Orders whose stream this batch started: they have no stored state to load.
        var newOrders = Set<String>()
        var enrollmentRefs: [String] = []
        for (new, attachment, outcome) in appended {
            guard case .appended(let receipt) = outcome else { continue }
            // The submitter attaches the parsed event; parse the payload only when it did not.
            let recorded = try (attachment as? LedgerEvent).map {
                RecordedEvent(event: $0, position: receipt.position, recordedAt: receipt.recordedAt)
            } ?? EventMapping.recorded(new, receipt)
            if let no = recorded.event.merchantOrderNo {
                if let i = orderEvents.firstIndex(where: { $0.0 == no }) {
                    orderEvents[i].1.append(recorded)
                } else {
                    orderEvents.append((no, [recorded]))
                    if receipt.streamVersion == 1 { newOrders.insert(no.value) }
                }
            } else if case .enrollment(let e) = recorded.event, !enrollmentRefs.contains(e.enrollmentRef) {
                enrollmentRefs.append(e.enrollmentRef)
            }
        }
        try apply(orderEvents, new: newOrders, on: c)
        for ref in enrollmentRefs {
            let stored = try EventStore().read(stream: "enrollment-" + ref, on: c)
            try enrollments.save(EnrollmentState.replay(ref, stored.map(EventMapping.recorded)), on: c)
        }
    }

    /// Folds each order's new events into its stored state and saves them all:
    /// one query to load, one to save, whatever the batch size. The export
    /// period key (when the first paid observation was recorded) is set once.
    /// Orders in `new` (their stream's first event is in this batch) start from
    /// the empty state without a load: events are the source of truth, and the
    /// save is an upsert either way.
    func apply(_ batch: [(MerchantOrderNo, [RecordedEvent])], new: Set<String> = [], on c: PostgresConnection) throws {
        let toLoad = batch.map(\.0).filter { !new.contains($0.value) }
        let stored = toLoad.isEmpty ? [:] : try orders.loadMany(toLoad, on: c)
        var updated: [(OrderState, Timestamp?)] = []
        updated.reserveCapacity(batch.count)
        for (no, events) in batch {
            var model = stored[no.value] ?? (OrderState(merchantOrderNo: no), nil)
            for event in events { Self.fold(&model, event) }
            updated.append(model)
        }
        try orders.saveMany(updated, on: c)
    }

    /// One event into a read model: the reducer's state, and the export period
    /// key (when the first paid observation was recorded), which is set once.
    /// Live projection, rebuild and verify all fold through here.
    static func fold(_ model: inout (OrderState, Timestamp?), _ event: RecordedEvent) {
        OrderState.reduce(into: &model.0, event)
        if model.1 == nil && model.0.paid { model.1 = event.recordedAt }
    }
}
