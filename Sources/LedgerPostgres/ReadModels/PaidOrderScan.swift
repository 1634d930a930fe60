import LedgerCore

/// The orders whose first paid observation was recorded in [`from`, `to`) (the orders
/// export's rows, exports.md), by that time and order number, read with one binary COPY
/// in the caller's transaction: streamed, so memory stays flat however many there are.
///
/// A row saved with the current rendering (`OrderDocuments.version`) comes as the columns
/// the read model stores beside its state, derived from that state when it was saved:
/// nothing to parse (parsing each state cost three times what PostgreSQL took to send
/// it). A row of another version comes as its state, to be derived again, as reads do.
package struct PaidOrderScan {
    package let from: Timestamp
    package let to: Timestamp

    package init(from: Timestamp, to: Timestamp) {
        self.from = from
        self.to = to
    }

    /// One row of the scan.
    package enum Row: Sendable {
        /// The stored fields, and when the order was last updated.
        case fields(ExportedOrder, updatedAt: Timestamp)
        /// The stored state, of another rendering version.
        case state(OrderState)
    }

    /// Hands each row of the COPY to `each` where it lies (valid only during the call), in
    /// the export's order. `each` runs while the COPY streams: it must not use `c`.
    package func scan(on c: PostgresConnection, each: (BinaryCopyRow) throws -> Void) throws {
        // COPY takes no parameters: the values reach it as settings of this transaction.
        try c.query("""
            SELECT set_config('ledger.export_from', $1, true), set_config('ledger.export_to', $2, true),
                   set_config('ledger.export_version', $3, true)
            """, [.int(from.microseconds), .int(to.microseconds), .int(Int64(OrderDocuments.version))])
        if try coversMostPaidOrders(on: c) {
            try c.query("SELECT set_config('enable_indexscan', 'off', true), set_config('enable_bitmapscan', 'off', true)")
        }
        var reader = BinaryCopyReader()
        try c.copyOut(Self.sql) { piece in
            try reader.read(piece) { row in try each(row) }
        }
        try reader.finish()
    }

    /// Whether the period holds at least half of the paid orders, by the planner's
    /// estimates. Then one pass over the table and a sort reads them faster than the
    /// index on paid_recorded_at does (its order is not the table's: following it visits
    /// the table's pages at random), though the planner, trusting the column's
    /// correlation, prefers the index: for a whole year of 200,000 orders, 0.5 s against
    /// 0.85 s. A month out of years is a few rows, for which the index is right.
    func coversMostPaidOrders(on c: PostgresConnection) throws -> Bool {
        let plan = try c.query("""
            EXPLAIN (FORMAT JSON)
            SELECT 1 FROM ledger.orders
             WHERE paid_recorded_at >= ledger.from_micros($1) AND paid_recorded_at < ledger.from_micros($2)
            """, [.int(from.microseconds), .int(to.microseconds)])
        let paid = try c.query("""
            EXPLAIN (FORMAT JSON) SELECT 1 FROM ledger.orders WHERE paid_recorded_at IS NOT NULL
            """)
        guard let inPeriod = try Self.plannedRows(plan), let all = try Self.plannedRows(paid), all > 0 else { return false }
        return inPeriod * 2 >= all
    }

    /// The row count the top node of an `EXPLAIN (FORMAT JSON)` expects.
    static func plannedRows(_ r: QueryResult) throws -> Double? {
        guard r.count == 1, let text = try r.value(0, "QUERY PLAN"),
              case .array(let plans) = try JSONValue.parse(text), let top = plans.first?["Plan"],
              case .number(let rows) = top["Plan Rows"] else { return nil }
        return Double(rows)
    }

    /// The period's bounds and the version are computed once (sub-selects), not for each row.
    static let sql = """
        COPY (SELECT CASE WHEN document_version = (SELECT current_setting('ledger.export_version')::smallint)
                          THEN NULL ELSE state END,
                     merchant_order_no, provider, provider_order_id, status, status_name, asset, expected_amount,
                     paid_amount, fiat_currency, fiat_amount, tx_hash, created_at, paid_at, late_payment, attention,
                     refunded, last_position, updated_at
                FROM ledger.orders
               WHERE paid_recorded_at >= (SELECT ledger.from_micros(current_setting('ledger.export_from')::bigint))
                 AND paid_recorded_at < (SELECT ledger.from_micros(current_setting('ledger.export_to')::bigint))
               ORDER BY paid_recorded_at, merchant_order_no)
          TO STDOUT (FORMAT binary)
        """

    /// Writes a row of the current rendering last updated before `before` straight from the
    /// COPY's bytes (the cells `ExportedOrder.write` makes of its fields, with no value made
    /// of them) and counts it in `manifest`; false, writing nothing, for any other row,
    /// which the caller derives from `row(_:)`.
    package static func write(_ r: BinaryCopyRow, updatedBefore before: Timestamp, to w: inout ExportRowWriter,
                              counting manifest: inout ExportManifest) throws -> Bool {
        guard r.count == 19 else { throw PostgresError.unexpectedResult("the paid-order scan returned \(r.count) columns") }
        guard r.isNull(0), let updated = try r.timestamp(18), updated.microseconds < before.microseconds else { return false }
        let lastPosition = try r.int64(17)
        w.text(utf8: r.buffer(1) ?? Self.empty); w.text(utf8: r.buffer(2)); w.text(utf8: r.buffer(3))
        w.integer(Int64(try r.int16(4))); w.text(utf8: r.buffer(5) ?? Self.empty); w.text(utf8: r.buffer(6))
        w.amount(utf8: r.buffer(7)); w.amount(utf8: r.buffer(8)); w.text(utf8: r.buffer(9)); w.amount(utf8: r.buffer(10))
        w.text(utf8: r.buffer(11)); w.time(try r.timestamp(12)); w.time(try r.timestamp(13)); w.bool(try r.bool(14))
        w.bool(try r.bool(15)); w.bool(try r.bool(16)); w.integer(lastPosition)
        w.endRow()
        manifest.counted(asset: r.string(6), amount: r.string(8), position: lastPosition)
        return true
    }

    /// An empty cell's bytes (a NOT NULL text column read as NULL is written as empty text).
    private static var empty: UnsafeRawBufferPointer { UnsafeRawBufferPointer(start: nil, count: 0) }

    package static func row(_ r: BinaryCopyRow) throws -> Row {
        guard r.count == 19 else { throw PostgresError.unexpectedResult("the paid-order scan returned \(r.count) columns") }
        if let state = r.buffer(0) {
            return .state(try OrderState(storage: JSONParser.parse(Array(state), maxDepth: JSONParser.storedMaxDepth)))
        }
        let order = ExportedOrder(
            merchantOrderNo: r.string(1) ?? "", provider: r.string(2), providerOrderId: r.string(3),
            status: Int(try r.int16(4)), statusName: r.string(5) ?? "", asset: r.string(6),
            expectedAmount: r.string(7), paidAmount: r.string(8), fiatCurrency: r.string(9), fiatAmount: r.string(10),
            txHash: r.string(11), createdAt: try r.timestamp(12), paidAt: try r.timestamp(13),
            latePayment: try r.bool(14), attention: try r.bool(15), refunded: try r.bool(16),
            lastPosition: try r.int64(17))
        return .fields(order, updatedAt: try r.timestamp(18) ?? Timestamp(microseconds: 0))
    }
}
