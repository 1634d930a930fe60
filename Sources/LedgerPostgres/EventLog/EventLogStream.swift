import LedgerCore

/// The log after a position, in ledger order, read with one binary COPY: what a walk of
/// the hash chain from that position needs (`ChainContinuation`), streamed, its memory
/// flat. One statement, so one snapshot: a prefix of the log as it was committed when
/// the COPY began (appends take positions in order under the append lock).
package struct EventLogStream {
    package init() {}

    /// Hands each event after `position` to `each`, in order. `each` runs while the COPY
    /// streams: it must not use `connection`. If it throws, the COPY stops and its error
    /// is rethrown.
    package func run(after position: Int64, on connection: PostgresConnection, each: (StoredEvent) throws -> Void) throws {
        // COPY takes no parameters: the position goes through a setting.
        try connection.query("SELECT set_config('ledger.stream_after', $1, false)", [.text(String(position))])
        var reader = BinaryCopyReader()
        try connection.copyOut(Self.sql) { piece in
            try reader.read(piece) { row in try each(StoredEvent(copyRow: row)) }
        }
        try reader.finish()
    }

    /// The columns ChainHash hashes, as `StoredEvent(copyRow:)` reads them.
    static let sql = """
        COPY (SELECT position, event_id::text, stream, stream_version, type, source, payload::text,
                     raw, metadata::text, idempotency_key, recorded_at, observed_at, hash
                FROM ledger.events
               WHERE position > current_setting('ledger.stream_after')::bigint
               ORDER BY position)
          TO STDOUT (FORMAT binary)
        """
}
