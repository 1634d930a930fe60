import LedgerCore
import LedgerPostgres

/// Keeps the read models in the same transaction as the events they reflect:
/// for every order (or enrollment) touched by a batch, load its state, fold
/// the new events with the pure reducer, and save it.
struct OrderProjection: BatchProjector {
    let orders = OrderReadModel()
    let enrollments = EnrollmentReadModel()

    func project(_ appended: [(event: NewEvent, outcome: AppendOutcome)], on c: PostgresConnection) throws {
        var orderEvents: [(MerchantOrderNo, [RecordedEvent])] = []
        var enrollmentRefs: [String] = []
        for (new, outcome) in appended {
            guard case .appended(let receipt) = outcome else { continue }
            let recorded = try EventMapping.recorded(new, receipt)
            if let no = recorded.event.merchantOrderNo {
                if let i = orderEvents.firstIndex(where: { $0.0 == no }) {
                    orderEvents[i].1.append(recorded)
                } else {
                    orderEvents.append((no, [recorded]))
                }
            } else if case .enrollment(let e) = recorded.event, !enrollmentRefs.contains(e.enrollmentRef) {
                enrollmentRefs.append(e.enrollmentRef)
            }
        }
        for (no, events) in orderEvents {
            try apply(events, to: no, on: c)
        }
        for ref in enrollmentRefs {
            let stored = try EventStore().read(stream: "enrollment-" + ref, on: c)
            try enrollments.save(EnrollmentState.replay(ref, stored.map(EventMapping.recorded)), on: c)
        }
    }

    /// Folds `events` into the order's stored state and saves it. The export
    /// period key (when the first paid observation was recorded) is set once.
    func apply(_ events: [RecordedEvent], to no: MerchantOrderNo, on c: PostgresConnection) throws {
        var (state, paidRecordedAt) = try orders.load(no, forUpdate: true, on: c) ?? (OrderState(merchantOrderNo: no), nil)
        for event in events {
            OrderState.reduce(into: &state, event)
            if paidRecordedAt == nil && state.paid { paidRecordedAt = event.recordedAt }
        }
        try orders.save(state, paidRecordedAt: paidRecordedAt, on: c)
    }
}
