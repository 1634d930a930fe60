import LedgerCore

/// Every row of ledger.orders, read with one binary COPY in order-number order (bytes,
/// the "C" collation), handed out as pages of text values under `ReadModelCheck`'s
/// column names: what `ledger verify` compares with a replay of each order's stream.
/// One streamed read instead of a query a page: PostgreSQL sends times and numbers as
/// they are stored rather than converting every one to text (the page queries cost it
/// more than the COPY of the whole log did), and memory holds one page.
package struct OrderRowScan {
    package let pageSize: Int

    package init(pageSize: Int = ReadModelCheck.pageSize) { self.pageSize = pageSize }

    /// The page's column names: `PageColumns`' and `OrderStreamCheck`'s.
    static let columns = [
        "merchant_order_no", "state", "paid_recorded_us", "provider", "status", "status_name", "paid", "attention",
        "late_payment", "refunded", "expected_amount", "paid_amount", "asset", "fiat_currency", "fiat_amount",
        "provider_order_id", "tx_hash", "external_customer_id", "created_us", "updated_us", "paid_us",
        "event_count", "last_position", "document", "document_masked",
    ]

    /// Hands each page to `each`, in order. Run it in a transaction (its planner settings
    /// are the transaction's); `each` runs while the COPY streams: it must not use `c`.
    package func run(on c: PostgresConnection, each: (QueryResult) throws -> Void) throws {
        // The rows stream from the primary key from the first one: a sort would hold
        // them all back until the whole table was sorted.
        try c.query("""
            SELECT set_config('ledger.verify_version', $1, true), set_config('enable_sort', 'off', true),
                   set_config('max_parallel_workers_per_gather', '0', true)
            """, [.int(Int64(OrderDocuments.version))])
        var reader = BinaryCopyReader()
        var rows: [[String?]] = []
        rows.reserveCapacity(pageSize)
        try c.copyOut(Self.sql) { piece in
            try reader.read(piece) { row in
                rows.append(try Self.values(row))
                if rows.count == pageSize {
                    try each(QueryResult(columns: Self.columns, rows: rows, affectedRows: 0))
                    rows.removeAll(keepingCapacity: true)
                }
            }
        }
        try reader.finish()
        if !rows.isEmpty { try each(QueryResult(columns: Self.columns, rows: rows, affectedRows: 0)) }
    }

    /// Documents only when of the current rendering version (another is not served); the
    /// masked one only when stored apart (NULL: the masked document is the document, as
    /// `coalesce(document_masked, document)` serves it), so no document is sent twice.
    static let sql = """
        COPY (SELECT merchant_order_no, state, paid_recorded_at, provider, status, status_name, paid, attention,
                     late_payment, refunded, expected_amount, paid_amount, asset, fiat_currency, fiat_amount,
                     provider_order_id, tx_hash, external_customer_id, created_at, updated_at, paid_at,
                     event_count, last_position,
                     CASE WHEN document_version = (SELECT current_setting('ledger.verify_version')::smallint)
                          THEN document END,
                     CASE WHEN document_version = (SELECT current_setting('ledger.verify_version')::smallint)
                          THEN document_masked END
                FROM ledger.orders
               ORDER BY merchant_order_no)
          TO STDOUT (FORMAT binary)
        """

    /// A row's values as the text PostgreSQL prints them (times as microseconds since
    /// 1970, booleans as t/f).
    static func values(_ r: BinaryCopyRow) throws -> [String?] {
        guard r.count == columns.count else {
            throw PostgresError.unexpectedResult("the order row scan returned \(r.count) columns")
        }
        func micros(_ i: Int) throws -> String? { try r.timestamp(i).map { String($0.microseconds) } }
        func flag(_ i: Int) throws -> String? { r.isNull(i) ? nil : (try r.bool(i) ? "t" : "f") }
        return [
            r.string(0), r.string(1), try micros(2), r.string(3), r.isNull(4) ? nil : String(try r.int16(4)),
            r.string(5), try flag(6), try flag(7), try flag(8), try flag(9), r.string(10), r.string(11),
            r.string(12), r.string(13), r.string(14), r.string(15), r.string(16), r.string(17),
            try micros(18), try micros(19), try micros(20),
            r.isNull(21) ? nil : String(try r.int32(21)), r.isNull(22) ? nil : String(try r.int64(22)),
            r.string(23), r.string(24),
        ]
    }
}
