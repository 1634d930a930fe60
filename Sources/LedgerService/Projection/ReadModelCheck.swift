import LedgerCore
import LedgerPostgres

/// Re-runs the reducer over every event and compares the result with the
/// stored read models: the second half of `ledger verify`.
/// Holds one state per order in memory while it walks the log.
struct ReadModelCheck {
    private var states: [String: (OrderState, Timestamp?)] = [:]
    /// Each enrollment's events, in ledger order (enrollments are few and short).
    private var enrollmentEvents: [String: [RecordedEvent]] = [:]
    private var unreadable: [String] = []

    /// Feed events in ledger order (from the chain walk).
    mutating func add(_ stored: StoredEvent) {
        if stored.stream.hasPrefix("enrollment-") {
            do {
                let recorded = try EventMapping.recorded(stored)
                if case .enrollment(let e) = recorded.event { enrollmentEvents[e.enrollmentRef, default: []].append(recorded) }
            } catch {
                unreadable.append("event \(stored.position) (\(stored.stream)) cannot be read back: \(error)")
            }
            return
        }
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

    /// Every difference between the replayed states and the read models, in words.
    /// `ledger.orders` is read in pages of 1,000 rows, each row whole (its state, every
    /// column lists filter on, both stored documents): one query a page, not per order.
    func differences(on c: PostgresConnection) throws -> [String] {
        var found: [String] = unreadable
        var seen = Set<String>()
        var after = ""
        while true {
            let page = try c.query(Self.pageSQL, [.text(after), .int(Int64(OrderDocuments.version))])
            if page.count == 0 { break }
            for r in 0..<page.count {
                let text = try page.string(r, "merchant_order_no")
                after = text
                seen.insert(text)
                guard let no = try? MerchantOrderNo(text),
                      let stored = try? OrderState(storage: JSONValue.parse(stored: try page.string(r, "state"))) else {
                    found.append("order \(text): the read model row cannot be read")
                    continue
                }
                let storedPaid = try page.value(r, "paid_recorded_us").flatMap(Int64.init).map(Timestamp.init(microseconds:))
                guard let (replayed, replayedPaid) = states[text] else {
                    found.append("order \(text): in ledger.orders but has no events")
                    continue
                }
                if stored != replayed {
                    found.append("order \(text): the read model differs from a replay of its events (status \(stored.status.rawValue) stored, \(replayed.status.rawValue) replayed)")
                } else if storedPaid != replayedPaid {
                    found.append("order \(text): paid_recorded_at differs from a replay of its events")
                } else {
                    found += try columnDifferences(no, replayed, page, r)
                    found += try documentDifferences(no, replayed, page, r)
                }
            }
        }
        for no in states.keys.sorted() where !seen.contains(no) {
            found.append("order \(no): has events but no row in ledger.orders")
        }
        return found + (try enrollmentDifferences(on: c))
    }

    /// A page of ledger.orders after $1, whole rows; documents only when of rendering version $2.
    static let pageSQL = """
        SELECT merchant_order_no, state::text AS state, ledger.micros(paid_recorded_at) AS paid_recorded_us,
               provider, status, status_name, paid, attention, late_payment, refunded, expected_amount,
               paid_amount, asset, fiat_currency, fiat_amount, provider_order_id, tx_hash, external_customer_id,
               ledger.micros(created_at) AS created_us, ledger.micros(updated_at) AS updated_us,
               ledger.micros(paid_at) AS paid_us, event_count, last_position,
               CASE WHEN document_version = $2::smallint THEN document END AS document,
               CASE WHEN document_version = $2::smallint THEN coalesce(document_masked, document) END AS document_masked
          FROM ledger.orders WHERE merchant_order_no > $1
         ORDER BY merchant_order_no LIMIT 1000
        """

    /// The columns that lists and filters read (`GET /v1/orders`), copies of the state's
    /// fields, against the replayed state: a row whose state is right but whose copies
    /// drifted would answer lists wrongly.
    private func columnDifferences(_ no: MerchantOrderNo, _ s: OrderState, _ page: QueryResult, _ r: Int) throws -> [String] {
        func flag(_ value: Bool) -> String { value ? "t" : "f" }
        var expected: [(column: String, value: String?)] = [
            ("provider", s.provider), ("status", String(s.status.rawValue)), ("status_name", s.statusName),
            ("paid", flag(s.paid)), ("attention", flag(s.attention)), ("late_payment", flag(s.latePayment)),
            ("refunded", flag(s.refunded)), ("expected_amount", s.expectedAmount), ("paid_amount", s.paidAmount),
            ("asset", s.asset), ("fiat_currency", s.fiatCurrency), ("fiat_amount", s.fiatAmount),
            ("provider_order_id", s.providerOrderId), ("tx_hash", s.txHash), ("external_customer_id", s.externalCustomerId),
            ("created_us", s.createdAt.map { String($0.microseconds) }), ("paid_us", s.paidAt.map { String($0.microseconds) }),
            ("event_count", String(s.eventCount)), ("last_position", String(s.lastPosition ?? 0)),
        ]
        // A state without an update time was saved with the time of saving: nothing to compare.
        if let updated = s.updatedAt { expected.append(("updated_us", String(updated.microseconds))) }
        let differing = try expected.filter { try page.value(r, $0.column) != $0.value }.map(\.column)
        guard !differing.isEmpty else { return [] }
        return ["order \(no.value): \(differing.joined(separator: ", ")) differ from a replay of its events"]
    }

    /// The stored response documents (what GET answers) against those rendered
    /// from the replayed state. A document of another rendering version is not
    /// served (it is derived from the state), so it is no difference.
    private func documentDifferences(_ no: MerchantOrderNo, _ replayed: OrderState, _ page: QueryResult, _ r: Int) throws -> [String] {
        let expected = OrderDocuments(replayed)
        var found: [String] = []
        for (masked, column) in [(false, "document"), (true, "document_masked")] {
            if let stored = try page.value(r, column), Array(stored.utf8) != expected.body(masked: masked) {
                found.append("order \(no.value): the stored \(masked ? "masked " : "")response document differs from one rendered from a replay of its events")
            }
        }
        return found
    }

    /// `ledger.enrollments` against a replay of each enrollment's events (and no row without events).
    private func enrollmentDifferences(on c: PostgresConnection) throws -> [String] {
        var found: [String] = []
        for ref in enrollmentEvents.keys.sorted() {
            let replayed = EnrollmentState.replay(ref, enrollmentEvents[ref] ?? [])
            let row = try c.query("""
                SELECT phase, last_position, state = $2::jsonb AS same_state FROM ledger.enrollments WHERE enrollment_ref = $1
                """, [.text(ref), .text(JSONSerializer.string(replayed.toJSON()))])
            guard row.count == 1 else {
                found.append("enrollment \(ref): has events but no row in ledger.enrollments")
                continue
            }
            if try row.string(0, "phase") != replayed.phase.rawValue || row.int64(0, "last_position") != (replayed.lastPosition ?? 0)
                || !row.bool(0, "same_state") {
                found.append("enrollment \(ref): the read model differs from a replay of its events")
            }
        }
        let rows = try c.query("SELECT enrollment_ref FROM ledger.enrollments ORDER BY enrollment_ref")
        for r in 0..<rows.count {
            let ref = try rows.string(r, "enrollment_ref")
            if enrollmentEvents[ref] == nil { found.append("enrollment \(ref): in ledger.enrollments but has no events") }
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
