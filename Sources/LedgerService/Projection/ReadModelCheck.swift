import LedgerCore
import LedgerPostgres

/// Re-runs the reducer over every event and compares the result with the
/// stored read models: the second half of `ledger verify`.
/// Holds one state per order in memory while it walks the log.
struct ReadModelCheck {
    private var states: [String: (OrderState, Timestamp?)] = [:]
    private var unreadable: [String] = []

    /// Feed events in ledger order (from the chain walk).
    mutating func add(_ stored: StoredEvent) {
        guard stored.stream.hasPrefix("order-") else { return }
        let recorded: RecordedEvent
        do {
            recorded = try EventMapping.recorded(stored)
        } catch {
            unreadable.append("event \(stored.position) (\(stored.stream)) cannot be read back: \(error)")
            return
        }
        guard let no = recorded.event.merchantOrderNo else { return }
        var model = states[no.value] ?? (OrderState(merchantOrderNo: no), nil)
        OrderProjection.fold(&model, recorded)
        states[no.value] = model
    }

    /// Every difference between the replayed states and `ledger.orders`, in words.
    func differences(on c: PostgresConnection) throws -> [String] {
        var found: [String] = unreadable
        var seen = Set<String>()
        let model = OrderReadModel()
        var after = ""
        while true {
            let page = try c.query("""
                SELECT merchant_order_no FROM ledger.orders WHERE merchant_order_no > $1
                 ORDER BY merchant_order_no LIMIT 1000
                """, [.text(after)])
            if page.count == 0 { break }
            for r in 0..<page.count {
                let text = try page.string(r, "merchant_order_no")
                after = text
                seen.insert(text)
                guard let no = try? MerchantOrderNo(text), let (stored, storedPaid) = try model.load(no, on: c) else {
                    found.append("order \(text): the read model row cannot be read")
                    continue
                }
                guard let (replayed, replayedPaid) = states[text] else {
                    found.append("order \(text): in ledger.orders but has no events")
                    continue
                }
                if stored != replayed {
                    found.append("order \(text): the read model differs from a replay of its events (status \(stored.status.rawValue) stored, \(replayed.status.rawValue) replayed)")
                } else if storedPaid != replayedPaid {
                    found.append("order \(text): paid_recorded_at differs from a replay of its events")
                } else {
                    found += try documentDifferences(no, replayed, model: model, on: c)
                }
            }
        }
        for no in states.keys.sorted() where !seen.contains(no) {
            found.append("order \(no): has events but no row in ledger.orders")
        }
        return found
    }

    /// The stored response documents (what GET answers) against those rendered
    /// from the replayed state. A document of another rendering version is not
    /// served (it is derived from the state), so it is no difference.
    private func documentDifferences(_ no: MerchantOrderNo, _ replayed: OrderState, model: OrderReadModel,
                                     on c: PostgresConnection) throws -> [String] {
        let expected = OrderDocuments(replayed)
        var found: [String] = []
        for masked in [false, true] {
            if case .body(let body) = try model.document(no, masked: masked, on: c), body != expected.body(masked: masked) {
                found.append("order \(no.value): the stored \(masked ? "masked " : "")response document differs from one rendered from a replay of its events")
            }
        }
        return found
    }
}
