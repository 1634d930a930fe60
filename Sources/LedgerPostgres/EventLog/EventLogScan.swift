import LedgerCore

/// Every event of the log, read once with a binary COPY, in stream order (each stream's
/// events by version, the streams by name) and each with the stored hash of the position
/// before it: what a fold of every stream needs, and all that checking each link of the
/// hash chain needs (`ChainLinkCheck`), in one streamed read whose memory stays flat.
package struct EventLogScan {
    package init() {}

    /// Hands each event, read in place, with the stored hash at its position - 1 (nil when
    /// there is no such event), to `each`, in stream order. `each` runs while the COPY
    /// streams: it must not use `connection`, nor keep the row. Run it in a transaction
    /// (its planner settings are the transaction's).
    package func run(on connection: PostgresConnection,
                     each: (EventCopyRow, _ previousHash: [UInt8]?) throws -> Void) throws {
        // Stream from the first row: the events in the order of their (stream, version)
        // index, each joined to its predecessor by the primary key. A sort (or a hash join,
        // which then needs one) would hold every row back until the whole log was sorted;
        // parallel workers would spend the cores the readers of the stream need.
        try connection.query("""
            SELECT set_config('enable_sort', 'off', true), set_config('enable_hashjoin', 'off', true),
                   set_config('enable_mergejoin', 'off', true), set_config('max_parallel_workers_per_gather', '0', true)
            """)
        var reader = BinaryCopyReader()
        try connection.copyOut(Self.sql) { piece in
            try reader.read(piece) { row in
                guard row.count == 14 else { throw PostgresError.unexpectedResult("the event scan returned \(row.count) columns") }
                try each(try EventCopyRow(row), row.bytes(13))
            }
        }
        try reader.finish()
    }

    /// The columns ChainHash hashes, then the previous position's hash.
    static let sql = """
        COPY (SELECT e.position, e.event_id::text, e.stream, e.stream_version, e.type, e.source, e.payload::text,
                     e.raw, e.metadata::text, e.idempotency_key, e.recorded_at, e.observed_at, e.hash, p.hash
                FROM ledger.events e
                LEFT JOIN ledger.events p ON p.position = e.position - 1
               ORDER BY e.stream, e.stream_version)
          TO STDOUT (FORMAT binary)
        """
}
