import LedgerCore

/// The stored states of the orders whose first paid observation was recorded in
/// [`from`, `to`) (the orders export's rows, exports.md), by that time and order number,
/// read with one binary COPY in the caller's transaction: streamed, so memory stays flat
/// however many there are.
package struct PaidOrderScan {
    package let from: Timestamp
    package let to: Timestamp

    package init(from: Timestamp, to: Timestamp) {
        self.from = from
        self.to = to
    }

    /// Hands each order's stored state to `each`, in the export's order. `each` runs
    /// while the COPY streams: it must not use `c`.
    package func run(on c: PostgresConnection, each: (OrderState) throws -> Void) throws {
        // COPY takes no parameters: the values reach it as settings of this transaction.
        try c.query("SELECT set_config('ledger.export_from', $1, true), set_config('ledger.export_to', $2, true)",
                    [.int(from.microseconds), .int(to.microseconds)])
        var reader = BinaryCopyReader()
        try c.copyOut(Self.sql) { piece in
            try reader.read(piece) { row in
                guard row.count == 1, let state = row.buffer(0) else {
                    throw PostgresError.unexpectedResult("the paid-order scan returned no state")
                }
                try each(try OrderState(storage: JSONParser.parse(Array(state), maxDepth: JSONParser.storedMaxDepth)))
            }
        }
        try reader.finish()
    }

    /// The period's bounds are computed once (sub-selects), not for each row.
    static let sql = """
        COPY (SELECT state FROM ledger.orders
               WHERE paid_recorded_at >= (SELECT ledger.from_micros(current_setting('ledger.export_from')::bigint))
                 AND paid_recorded_at < (SELECT ledger.from_micros(current_setting('ledger.export_to')::bigint))
               ORDER BY paid_recorded_at, merchant_order_no)
          TO STDOUT (FORMAT binary)
        """
}
