import LedgerCore
import LedgerPostgres

/// SQL for `ledger.orders`: load one state, save one state.
struct OrderReadModel: Sendable {
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

    func save(_ s: OrderState, paidRecordedAt: Timestamp?, on c: PostgresConnection) throws {
        func time(_ t: Timestamp?) -> SQLValue { t.map { .text(String($0.microseconds)) } ?? .null }
        try c.query("""
            INSERT INTO ledger.orders AS o (
                merchant_order_no, provider, status, status_name, paid, attention, late_payment, refunded,
                expected_amount, paid_amount, asset, fiat_currency, fiat_amount, provider_order_id, tx_hash,
                external_customer_id, created_at, updated_at, paid_at, paid_recorded_at,
                event_count, last_position, state)
            VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16,
                    ledger.from_micros($17), ledger.from_micros($18), ledger.from_micros($19), ledger.from_micros($20),
                    $21, $22, $23::jsonb)
            ON CONFLICT (merchant_order_no) DO UPDATE SET
                provider = excluded.provider, status = excluded.status, status_name = excluded.status_name,
                paid = excluded.paid, attention = excluded.attention, late_payment = excluded.late_payment,
                refunded = excluded.refunded, expected_amount = excluded.expected_amount,
                paid_amount = excluded.paid_amount, asset = excluded.asset, fiat_currency = excluded.fiat_currency,
                fiat_amount = excluded.fiat_amount, provider_order_id = excluded.provider_order_id,
                tx_hash = excluded.tx_hash, external_customer_id = excluded.external_customer_id,
                created_at = excluded.created_at, updated_at = excluded.updated_at, paid_at = excluded.paid_at,
                paid_recorded_at = excluded.paid_recorded_at, event_count = excluded.event_count,
                last_position = excluded.last_position, state = excluded.state
            """, [
                .text(s.merchantOrderNo.value), .optional(s.provider), .int(Int64(s.status.rawValue)), .text(s.statusName),
                .bool(s.paid), .bool(s.attention), .bool(s.latePayment), .bool(s.refunded),
                .optional(s.expectedAmount), .optional(s.paidAmount), .optional(s.asset), .optional(s.fiatCurrency),
                .optional(s.fiatAmount), .optional(s.providerOrderId), .optional(s.txHash), .optional(s.externalCustomerId),
                time(s.createdAt), time(s.updatedAt ?? Timestamp.now()), time(s.paidAt), time(paidRecordedAt),
                .int(Int64(s.eventCount)), .int(s.lastPosition ?? 0), .text(JSONSerializer.string(s.storageJSON())),
            ])
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
