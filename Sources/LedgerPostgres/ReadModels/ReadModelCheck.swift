import Glibc
import LedgerCore

/// Replays every order and enrollment from its own stream and compares the result
/// with the stored read models: the second half of `ledger verify`. It reads the read
/// models a page of 1,000 rows at a time, so its memory does not grow with the ledger;
/// the orders' events come from the scan of the log (`OrderStreamCheck`), the
/// enrollments' a page of streams at a time.
package struct ReadModelCheck {
    private let store = EventStore()
    package static let pageSize = 1000

    package init() {}

    private static func textArray(_ values: [String]) -> SQLValue {
        var array = BinaryArray(.text)
        for value in values { array.append(text: value) }
        return array.parameter
    }

    /// Hands each enrollment difference to `each` as it is found: `ledger.enrollments`
    /// against a replay of each enrollment's stream, and the enrollment streams with no
    /// row. The orders are checked as the log is scanned (`OrderStreamCheck`).
    package func checkEnrollments(on c: PostgresConnection, each: (ReadModelDifference) throws -> Void) throws {
        try withoutActuallyEscaping(each) { each in
            try enrollmentDifferences(on: c, Sink(each: each))
        }
    }

    /// Where the checks hand their differences.
    struct Sink {
        let each: (ReadModelDifference) throws -> Void
        func add(_ subject: String, _ fields: [String], _ text: String) throws {
            try each(ReadModelDifference(subject: subject, fields: fields, text: text))
        }
    }

    /// One row of a page of `OrderRowScan` (order `text`) against a replay of its stream's events.
    func compareOrder(_ text: String, _ page: QueryResult, _ r: Int, _ columns: PageColumns, _ events: [ScannedEvent],
                      _ sink: Sink) throws {
        guard let no = try? MerchantOrderNo(stored: text), let storedText = page.rows[r][columns.state] else {
            try sink.add("order \(text)", ["(unreadable)"], "order \(text): the read model row cannot be read")
            return
        }
        let storedPaid = page.rows[r][columns.paidRecorded].flatMap(Int64.init).map(Timestamp.init(microseconds:))
        guard !events.isEmpty else {
            try sink.add("order \(text)", ["(no events)"], "order \(text): in ledger.orders but has no events")
            return
        }
        guard let (replayed, replayedPaid) = try replay(no, events, sink) else { return }
        // The state as the projection writes it: the same bytes are the same state, and
        // only a state stored otherwise is parsed to be compared.
        var fields: [String] = []
        var storedStatus = replayed.status
        if !Self.same(storedText, replayed.storageBytes()) {
            guard let stored = try? OrderState(storage: JSONValue.parse(stored: storedText)) else {
                try sink.add("order \(text)", ["(unreadable)"], "order \(text): the read model row cannot be read")
                return
            }
            storedStatus = stored.status
            if stored != replayed { fields = ReadModelDifference.stateFields(stored: stored, replayed: replayed) }
        }
        // Every field that differs, so that a reducer change can be reviewed field by field.
        if storedPaid != replayedPaid { fields.append("paid_recorded_at") }
        fields += columnDifferences(replayed, page, r, columns)
        fields += documentDifferences(replayed, page, r, columns)
        guard !fields.isEmpty else { return }
        var line = "order \(text): \(fields.joined(separator: ", ")) differ from a replay of its events"
        if storedStatus != replayed.status {
            line += " (state.status \(storedStatus.rawValue) stored, \(replayed.status.rawValue) replayed)"
        }
        try sink.add("order \(no.value)", fields, line)
    }

    /// Whether `text`'s UTF-8 is exactly `bytes`, compared a block at a time.
    static func same(_ text: String, _ bytes: [UInt8]) -> Bool {
        var text = text
        return text.withUTF8 { utf8 in
            utf8.count == bytes.count && bytes.withUnsafeBufferPointer { b in
                utf8.count == 0 || memcmp(utf8.baseAddress!, b.baseAddress!, utf8.count) == 0
            }
        }
    }

    /// An order's state folded from its stream, as the projection folds it; nil (and the
    /// event named to `sink`) when one of its events cannot be read back.
    func replay(_ no: MerchantOrderNo, _ events: [ScannedEvent], _ sink: Sink) throws -> (OrderState, Timestamp?)? {
        var model: (OrderState, Timestamp?) = (OrderState(merchantOrderNo: no), nil)
        for scanned in events {
            guard case .success(let recorded) = scanned.recorded else {
                if case .failure(let unreadable) = scanned.recorded {
                    try sink.add("event \(scanned.position)", ["(unreadable event)"],
                                 "event \(scanned.position) (\(scanned.stream)) cannot be read back: \(unreadable.reason)")
                }
                return nil
            }
            // The service writes an order's events to its own stream; another writer could
            // have broken that (the projection would fold such an event into the order it names).
            if let named = recorded.event.merchantOrderNo, named != no {
                try sink.add("event \(scanned.position)", ["(foreign stream)"],
                             "event \(scanned.position) in stream \(scanned.stream) names order \(named.value): an order's stream must hold its own events only")
                continue
            }
            OrderProjection.fold(&model, recorded)
        }
        return model
    }

    /// The columns that lists and filters read (`GET /v1/orders`), copies of the state's
    /// fields, against the replayed state: a row whose state is right but whose copies
    /// drifted would answer lists wrongly.
    private func columnDifferences(_ s: OrderState, _ page: QueryResult, _ r: Int, _ columns: PageColumns) -> [String] {
        func flag(_ value: Bool) -> String { value ? "t" : "f" }
        // In `PageColumns.compared`'s order.
        let expected: [String?] = [
            s.provider, String(s.status.rawValue), s.statusName,
            flag(s.paid), flag(s.attention), flag(s.latePayment),
            flag(s.refunded), s.expectedAmount, s.paidAmount,
            s.asset, s.fiatCurrency, s.fiatAmount,
            s.providerOrderId, s.txHash, s.externalCustomerId,
            s.createdAt.map { String($0.microseconds) }, s.paidAt.map { String($0.microseconds) },
            String(s.eventCount), String(s.lastPosition ?? 0),
        ]
        let row = page.rows[r]
        var found: [String] = []
        func compare(_ index: Int, _ value: String?) {
            guard row[index] != value else { return }
            let column = page.columns[index]
            // The column names, as lists and filters know them (`_us` is only how they are read here).
            found.append(column.hasSuffix("_us") ? String(column.dropLast(3)) + "_at" : column)
        }
        for (i, value) in expected.enumerated() { compare(columns.compared[i], value) }
        // A state without an update time was saved with the time of saving: nothing to compare.
        if let updated = s.updatedAt { compare(columns.updated, String(updated.microseconds)) }
        return found
    }

    /// Where `OrderRowScan`'s columns are in a page, found once a page rather than by name for
    /// every field of every row.
    struct PageColumns {
        /// The columns `columnDifferences` compares, in its order (`updated_us` after them).
        static let comparedNames = [
            "provider", "status", "status_name", "paid", "attention", "late_payment", "refunded",
            "expected_amount", "paid_amount", "asset", "fiat_currency", "fiat_amount", "provider_order_id",
            "tx_hash", "external_customer_id", "created_us", "paid_us", "event_count", "last_position",
        ]
        let compared: [Int]
        let updated: Int, state: Int, paidRecorded: Int, document: Int, documentMasked: Int

        init(_ page: QueryResult) throws {
            compared = try Self.comparedNames.map { try page.column($0) }
            updated = try page.column("updated_us")
            state = try page.column("state")
            paidRecorded = try page.column("paid_recorded_us")
            document = try page.column("document")
            documentMasked = try page.column("document_masked")
        }
    }

    /// The stored response documents (what GET answers) against those rendered
    /// from the replayed state. A document of another rendering version is not
    /// served (it is derived from the state), so it is no difference.
    private func documentDifferences(_ replayed: OrderState, _ page: QueryResult, _ r: Int, _ columns: PageColumns) -> [String] {
        let expected = OrderDocuments(replayed)
        let document = page.rows[r][columns.document]
        // What is served masked: the masked document when stored apart, else the document.
        let masked = page.rows[r][columns.documentMasked] ?? document
        var found: [String] = []
        if let document, !Self.same(document, expected.body(masked: false)) { found.append("document") }
        if let masked, !Self.same(masked, expected.body(masked: true)) { found.append("document_masked") }
        return found
    }

    /// `ledger.enrollments` against a replay of each enrollment's stream, a page at a time:
    /// its columns (phase, updated_at, last_position) and each member of its state (compared
    /// by PostgreSQL as jsonb values, key order and spelling aside), named field by field;
    /// then the enrollment streams that have no row.
    private func enrollmentDifferences(on c: PostgresConnection, _ sink: Sink) throws {
        var after = ""
        while true {
            let page = try c.query("""
                SELECT enrollment_ref, phase, last_position, (extract(epoch FROM updated_at) * 1000000)::bigint AS updated_us
                  FROM ledger.enrollments
                 WHERE enrollment_ref > $1 ORDER BY enrollment_ref LIMIT \(Self.pageSize)
                """, [.text(after)])
            if page.count == 0 { break }
            let refs = try (0..<page.count).map { try page.string($0, "enrollment_ref") }
            after = refs.last ?? after
            let streams = try store.read(streams: refs.map { "enrollment-" + $0 }, on: c)
            var fields: [String: [String]] = [:]
            var compared: [(ref: String, state: String)] = []
            for (r, ref) in refs.enumerated() {
                guard let events = streams["enrollment-" + ref], !events.isEmpty else {
                    try sink.add("enrollment \(ref)", ["(no events)"], "enrollment \(ref): in ledger.enrollments but has no events")
                    continue
                }
                var recorded: [RecordedEvent] = []
                for stored in events {
                    do { recorded.append(try EventMapping.recorded(stored)) } catch {
                        try sink.add("event \(stored.position)", ["(unreadable event)"],
                                     "event \(stored.position) (\(stored.stream)) cannot be read back: \(error)")
                    }
                }
                let replayed = EnrollmentState.replay(ref, recorded)
                var differ: [String] = []
                if try page.string(r, "phase") != replayed.phase.rawValue { differ.append("phase") }
                if let updated = replayed.updatedAt, try page.int64(r, "updated_us") != updated.microseconds { differ.append("updated_at") }
                if try page.int64(r, "last_position") != (replayed.lastPosition ?? 0) { differ.append("last_position") }
                fields[ref] = differ
                compared.append((ref, JSONSerializer.string(replayed.toJSON())))
            }
            // Each member of the state that differs (a state that is no object: each the replay has).
            let members = try c.query("""
                SELECT e.enrollment_ref, k.key
                  FROM ledger.enrollments e
                  JOIN unnest($1::text[], $2::text[]) AS r(ref, state) ON r.ref = e.enrollment_ref
                  JOIN LATERAL (SELECT jsonb_object_keys(CASE WHEN jsonb_typeof(e.state) = 'object' THEN e.state ELSE '{}' END)
                                UNION
                                SELECT jsonb_object_keys(r.state::jsonb)) AS k(key)
                    ON (e.state -> k.key) IS DISTINCT FROM (r.state::jsonb -> k.key)
                 WHERE e.state <> r.state::jsonb
                 ORDER BY 1, 2
                """, [Self.textArray(compared.map(\.ref)), Self.textArray(compared.map(\.state))])
            for r in 0..<members.count {
                fields[try members.string(r, "enrollment_ref"), default: []].append("state." + (try members.string(r, "key")))
            }
            for (ref, _) in compared {
                guard let differ = fields[ref], !differ.isEmpty else { continue }
                try sink.add("enrollment \(ref)", differ,
                             "enrollment \(ref): \(differ.joined(separator: ", ")) differ from a replay of its events (the read model differs)")
            }
        }
        let orphans = try c.query("""
            SELECT substr(e.stream, 12) AS ref FROM ledger.events e
             WHERE e.stream_version = 1 AND e.stream LIKE 'enrollment-%'
               AND NOT EXISTS (SELECT 1 FROM ledger.enrollments n WHERE n.enrollment_ref = substr(e.stream, 12))
             ORDER BY 1
            """)
        for r in 0..<orphans.count {
            let ref = try orphans.string(r, "ref")
            try sink.add("enrollment \(ref)", ["(no row)"], "enrollment \(ref): has events but no row in ledger.enrollments")
        }
    }
}
