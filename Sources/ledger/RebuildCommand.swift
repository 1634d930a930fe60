import LedgerCore
import LedgerPostgres
import LedgerService

/// `ledger rebuild`: recomputes ledger.orders and ledger.enrollments from the
/// events, in one transaction, holding the append lock so no write interleaves.
struct RebuildCommand {
    let cli: LedgerCLI

    func run(_ words: [String]) throws -> Int32 {
        let args = try Arguments(words, valued: [])
        if args.has("help") {
            cli.output("usage: ledger rebuild\n  Rebuilds the read models (ledger.orders, ledger.enrollments) from ledger.events, atomically.")
            return 0
        }
        try args.allowOnly(flags: ["help"])
        let projection = OrderProjection(cache: nil)
        let store = EventStore()
        let count = try cli.connect().transaction { c -> Int in
            try c.query("SELECT pg_advisory_xact_lock(7413001)")   // the append lock: writers wait
            try c.query("DELETE FROM ledger.orders")
            try c.query("DELETE FROM ledger.enrollments")
            var after: Int64 = 0
            var total = 0
            while true {
                let events = try store.read(after: after, limit: 2000, on: c)
                guard let last = events.last else { break }
                after = last.position
                total += events.count
                var byOrder: [(MerchantOrderNo, [RecordedEvent])] = []
                var enrollments = Set<String>()
                for stored in events {
                    let recorded = try Self.readable(stored)
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
                    try projection.enrollments.save(EnrollmentState.replay(ref, stream.map(Self.readable)), on: c)
                }
            }
            return total
        }
        cli.output("rebuilt the read models from \(count) events")
        return 0
    }

    /// An event as the projection folds it. One that cannot be read back stops the
    /// rebuild (its transaction rolls back, the read models stay as they were): a read
    /// model rebuilt without an event would be wrong, and quietly so.
    static func readable(_ stored: StoredEvent) throws -> RecordedEvent {
        do {
            return try EventMapping.recorded(stored)
        } catch {
            throw CLIError.failed("the event at position \(stored.position) cannot be read back (\(error)); nothing was rebuilt", exitCode: 1)
        }
    }
}
