import LedgerCore
import LedgerPostgres

/// The response documents of one order, rendered once when its state is saved
/// (Migrations/014_order_documents.sql) so reads need not derive them again.
struct OrderDocuments: Equatable, Sendable {
    /// Bump whenever the rendering changes (`OrderState.toJSON`, `EmailMasking`, the
    /// serializer): stored documents of another version are then ignored and derived
    /// from the state until the order is written again or `ledger rebuild` runs.
    static let version = 1

    /// The read model's JSON, as an auditor sees it.
    var document: [UInt8]
    /// The same with e-mail addresses masked, or nil when masking changes nothing.
    var masked: [UInt8]?

    init(_ state: OrderState) {
        let value = state.toJSON()
        document = JSONSerializer.bytes(value)
        masked = Self.mayHoldEmail(document) ? JSONSerializer.bytes(EmailMasking.mask(value)) : nil
        if masked == document { masked = nil }
    }

    /// The body for a reader who sees masked (or unmasked) e-mail addresses.
    func body(masked wantsMasked: Bool) -> [UInt8] { wantsMasked ? (masked ?? document) : document }

    /// False when `json` (serialized) holds neither "@" nor "%40", the marks EmailMasking
    /// looks for in every string and key: then masking its value would change nothing.
    static func mayHoldEmail(_ json: [UInt8]) -> Bool {
        json.withUnsafeBufferPointer { b in
            guard b.count > 0 else { return false }
            for i in 0..<b.count {
                if b[i] == UInt8(ascii: "@") { return true }
                if b[i] == UInt8(ascii: "%"), i + 2 < b.count, b[i + 1] == UInt8(ascii: "4"), b[i + 2] == UInt8(ascii: "0") {
                    return true
                }
            }
            return false
        }
    }
}

/// SQL for `ledger.orders`: load one state, save one state.
struct OrderReadModel: Sendable {
    /// What a read of one order's stored document found.
    enum StoredDocument: Equatable {
        /// The response body, ready to send.
        case body([UInt8])
        /// The row exists but holds no current document (written before migration 014, or
        /// by another rendering version): derive it from the state.
        case stale
        case missing
    }

    /// The stored response document of one order: one indexed select, prepared once per
    /// connection, whose text is sent as it is.
    func document(_ no: MerchantOrderNo, masked: Bool, on c: PostgresConnection) throws -> StoredDocument {
        let row = try c.firstRow(masked ? Self.maskedDocumentSQL : Self.documentSQL,
                                 [.text(no.value), .int(Int64(OrderDocuments.version))], prepared: true)
        guard let row else { return .missing }
        guard let first = row.first, let body = first else { return .stale }
        return .body(body)
    }

    static let documentSQL = """
        SELECT CASE WHEN document_version = $2::smallint THEN document END
          FROM ledger.orders WHERE merchant_order_no = $1
        """
    static let maskedDocumentSQL = """
        SELECT CASE WHEN document_version = $2::smallint THEN coalesce(document_masked, document) END
          FROM ledger.orders WHERE merchant_order_no = $1
        """

    /// The stored state and the export period key, or nil for a new order.
    func load(_ no: MerchantOrderNo, forUpdate: Bool = false, on c: PostgresConnection) throws -> (OrderState, Timestamp?)? {
        let result = try c.query("""
            SELECT state::text AS state, ledger.micros(paid_recorded_at) AS paid_recorded_us
              FROM ledger.orders WHERE merchant_order_no = $1
            """ + (forUpdate ? " FOR UPDATE" : ""), [.text(no.value)])
        guard result.count == 1 else { return nil }
        let state = try OrderState(storage: JSONValue.parse(try result.string(0, "state")))
        let paidRecorded = try result.value(0, "paid_recorded_us").flatMap(Int64.init).map(Timestamp.init(microseconds:))
        return (state, paidRecorded)
    }

    /// The read-model JSON of one order, or nil.
    func json(_ no: MerchantOrderNo, on c: PostgresConnection) throws -> JSONValue? {
        try load(no, on: c).map { $0.0.toJSON() }
    }

    /// Many orders' stored states at once, locked for update (one round trip).
    func loadMany(_ numbers: [MerchantOrderNo], on c: PostgresConnection) throws -> [String: (OrderState, Timestamp?)] {
        if numbers.isEmpty { return [:] }
        // Order numbers are [A-Za-z0-9._:-]: safe inside a quoted array element.
        let array = "{" + numbers.map { "\"" + $0.value + "\"" }.joined(separator: ",") + "}"
        let result = try c.query("""
            SELECT merchant_order_no, state::text AS state, ledger.micros(paid_recorded_at) AS paid_recorded_us
              FROM ledger.orders WHERE merchant_order_no = ANY($1::text[])
             ORDER BY merchant_order_no
               FOR UPDATE
            """, [.text(array)])
        var out: [String: (OrderState, Timestamp?)] = [:]
        for r in 0..<result.count {
            let state = try OrderState(storage: JSONValue.parse(try result.string(r, "state")))
            let paid = try result.value(r, "paid_recorded_us").flatMap(Int64.init).map(Timestamp.init(microseconds:))
            out[try result.string(r, "merchant_order_no")] = (state, paid)
        }
        return out
    }

    func save(_ s: OrderState, paidRecordedAt: Timestamp?, on c: PostgresConnection) throws {
        try saveMany([(s, paidRecordedAt)], on: c)
    }

    /// Upserts many orders in one statement: the rows travel as one JSON array.
    func saveMany(_ states: [(OrderState, Timestamp?)], on c: PostgresConnection) throws {
        if states.isEmpty { return }
        func text(_ v: String?) -> JSONValue { v.map(JSONValue.string) ?? .null }
        func micros(_ t: Timestamp?) -> JSONValue { t.map { .string(String($0.microseconds)) } ?? .null }
        let rows: [JSONValue] = states.map { s, paidRecordedAt in
            let documents = OrderDocuments(s)
            return .object([
                ("no", .string(s.merchantOrderNo.value)), ("provider", text(s.provider)),
                ("status", .integer(s.status.rawValue)), ("status_name", .string(s.statusName)),
                ("paid", .bool(s.paid)), ("attention", .bool(s.attention)), ("late_payment", .bool(s.latePayment)),
                ("refunded", .bool(s.refunded)), ("expected_amount", text(s.expectedAmount)),
                ("paid_amount", text(s.paidAmount)), ("asset", text(s.asset)), ("fiat_currency", text(s.fiatCurrency)),
                ("fiat_amount", text(s.fiatAmount)), ("provider_order_id", text(s.providerOrderId)),
                ("tx_hash", text(s.txHash)), ("external_customer_id", text(s.externalCustomerId)),
                ("created_us", micros(s.createdAt)), ("updated_us", micros(s.updatedAt ?? Timestamp.now())),
                ("paid_us", micros(s.paidAt)), ("paid_recorded_us", micros(paidRecordedAt)),
                ("event_count", .integer(s.eventCount)), ("last_position", .integer(s.lastPosition ?? 0)),
                ("state", s.storageJSON()),
                ("document", .string(String(decoding: documents.document, as: UTF8.self))),
                ("document_masked", documents.masked.map { .string(String(decoding: $0, as: UTF8.self)) } ?? .null),
            ])
        }
        try c.query("""
            INSERT INTO ledger.orders AS o (
                merchant_order_no, provider, status, status_name, paid, attention, late_payment, refunded,
                expected_amount, paid_amount, asset, fiat_currency, fiat_amount, provider_order_id, tx_hash,
                external_customer_id, created_at, updated_at, paid_at, paid_recorded_at,
                event_count, last_position, state, document, document_masked, document_version)
            SELECT r.no, r.provider, r.status, r.status_name, r.paid, r.attention, r.late_payment, r.refunded,
                   r.expected_amount, r.paid_amount, r.asset, r.fiat_currency, r.fiat_amount, r.provider_order_id,
                   r.tx_hash, r.external_customer_id, ledger.from_micros(r.created_us), ledger.from_micros(r.updated_us),
                   ledger.from_micros(r.paid_us), ledger.from_micros(r.paid_recorded_us),
                   r.event_count, r.last_position, r.state, r.document, r.document_masked, $2::smallint
              FROM jsonb_to_recordset($1::jsonb) AS r(
                   no text, provider text, status smallint, status_name text, paid boolean, attention boolean,
                   late_payment boolean, refunded boolean, expected_amount text, paid_amount text, asset text,
                   fiat_currency text, fiat_amount text, provider_order_id text, tx_hash text,
                   external_customer_id text, created_us bigint, updated_us bigint, paid_us bigint,
                   paid_recorded_us bigint, event_count integer, last_position bigint, state jsonb,
                   document text, document_masked text)
            ON CONFLICT (merchant_order_no) DO UPDATE SET
                provider = excluded.provider, status = excluded.status, status_name = excluded.status_name,
                paid = excluded.paid, attention = excluded.attention, late_payment = excluded.late_payment,
                refunded = excluded.refunded, expected_amount = excluded.expected_amount,
                paid_amount = excluded.paid_amount, asset = excluded.asset, fiat_currency = excluded.fiat_currency,
                fiat_amount = excluded.fiat_amount, provider_order_id = excluded.provider_order_id,
                tx_hash = excluded.tx_hash, external_customer_id = excluded.external_customer_id,
                created_at = excluded.created_at, updated_at = excluded.updated_at, paid_at = excluded.paid_at,
                paid_recorded_at = excluded.paid_recorded_at, event_count = excluded.event_count,
                last_position = excluded.last_position, state = excluded.state, document = excluded.document,
                document_masked = excluded.document_masked, document_version = excluded.document_version
            """, [.text(JSONSerializer.string(.array(rows))), .int(Int64(OrderDocuments.version))],
            // Prepared once per connection: planned once, not at every commit. Safe as a
            // generic plan: the rows come from the parameter, the conflict from the key.
            prepared: true)
    }
}

/// SQL for `ledger.enrollments`. Enrollment state is small and rebuilt by
/// replaying its stream, then saved for reading.
struct EnrollmentReadModel: Sendable {
    func save(_ s: EnrollmentState, on c: PostgresConnection) throws {
        try c.query("""
            INSERT INTO ledger.enrollments AS e (enrollment_ref, phase, updated_at, last_position, state)
            VALUES ($1, $2, ledger.from_micros($3), $4, $5::jsonb)
            ON CONFLICT (enrollment_ref) DO UPDATE SET phase = excluded.phase, updated_at = excluded.updated_at,
                last_position = excluded.last_position, state = excluded.state
            """, [.text(s.enrollmentRef), .text(s.phase.rawValue),
                  .text(String((s.updatedAt ?? Timestamp.now()).microseconds)), .int(s.lastPosition ?? 0),
                  .text(JSONSerializer.string(s.toJSON()))])
    }
}
