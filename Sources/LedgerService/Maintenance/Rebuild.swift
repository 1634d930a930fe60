import LedgerCore
import LedgerPostgres

/// `ledger rebuild`: recomputes ledger.orders and ledger.enrollments from the events,
/// in one transaction, holding the append lock so no write interleaves, and never
/// from a log whose hash chain is broken.
package struct Rebuild: Sendable {
    package init() {}

    /// Returns how many events were folded. It verifies the hash chain as it reads
    /// (`ChainVerifier`, every hash recomputed from genesis): a broken link stops it, as
    /// does an event that cannot be read back. Either way its transaction rolls back and
    /// the read models stay as they were: a read model rebuilt from a tampered log, or
    /// without an event, would be wrong, and quietly so.
    package func run(on connection: PostgresConnection) throws -> Int {
        let projection = OrderProjection(cache: nil)
        let store = EventStore()
        return try connection.transaction { c -> Int in
            try ReadModelReset().clearHoldingAppendLock(on: c)
            var page: [StoredEvent] = []
            page.reserveCapacity(Self.pageSize)
            let verdict = try ChainVerifier(batchSize: Self.pageSize).verify(on: c, store: store) { event in
                page.append(event)
                if page.count == Self.pageSize {
                    try Self.project(page, projection, store, on: c)
                    page.removeAll(keepingCapacity: true)
                }
            }
            switch verdict {
            case .broken(let position, let reason):
                throw MaintenanceError.chainBroken(position: position, reason + "; nothing was rebuilt")
            case .intact(let events, _):
                try Self.project(page, projection, store, on: c)
                return Int(events)
            }
        }
    }

    static let pageSize = 2000

    /// Folds one page of verified events, in ledger order, into the read models.
    private static func project(_ events: [StoredEvent], _ projection: OrderProjection, _ store: EventStore,
                                on c: PostgresConnection) throws {
        guard let after = events.last?.position else { return }
        var byOrder: [(MerchantOrderNo, [RecordedEvent])] = []
        var enrollments = Set<String>()
        for stored in events {
            let recorded = try readable(stored)
            if let no = recorded.event.merchantOrderNo {
                if byOrder.last?.0 == no { byOrder[byOrder.count - 1].1.append(recorded) } else { byOrder.append((no, [recorded])) }
            } else if case .enrollment(let e) = recorded.event {
                enrollments.insert(e.enrollmentRef)
            }
        }
        // Consecutive runs of one order may repeat across the page; merge them per order.
        var merged: [(MerchantOrderNo, [RecordedEvent])] = []
        var index: [MerchantOrderNo: Int] = [:]
        for (no, recorded) in byOrder {
            if let i = index[no] { merged[i].1 += recorded } else { index[no] = merged.count; merged.append((no, recorded)) }
        }
        try projection.apply(merged, on: c)
        for ref in enrollments.sorted() {
            let stream = try store.read(stream: "enrollment-" + ref, on: c).filter { $0.position <= after }
            try projection.enrollments.save(EnrollmentState.replay(ref, stream.map(readable)), on: c)
        }
    }

    static func readable(_ stored: StoredEvent) throws -> RecordedEvent {
        do {
            return try EventMapping.recorded(stored)
        } catch {
            throw MaintenanceError.unreadableEvent(position: stored.position, String(describing: error))
        }
    }
}
