import LedgerCore

/// The events recorded in a period, read for an events export with one binary COPY in
/// ledger order, with everything the hash chain around them needs: the run of positions
/// from the one before the period's first event to the one after its last, each with
/// `inPeriod` (recording times are not strictly in ledger order, so a few events inside
/// the run may have been recorded outside the period; the test is made here, not in SQL,
/// where it cost PostgreSQL more than half as much again as the rest of the COPY). Checking every link of
/// that run (`ChainLinkCheck`) checks each exported event's links to both neighbours,
/// as `ChainLinks` does, without a round trip per batch.
package struct PeriodEventScan {
    package let from: Timestamp
    package let to: Timestamp

    package init(from: Timestamp, to: Timestamp) {
        self.from = from
        self.to = to
    }

    /// The first and last position recorded in the period, in the caller's snapshot; nil
    /// when nothing was.
    package func bounds(on c: PostgresConnection) throws -> ClosedRange<Int64>? {
        // OFFSET 0 keeps min and max from becoming walks of the primary key from either end
        // (through every event outside the period): the period's pages come from the BRIN
        // index on recorded_at, as the rows' own selection did.
        let r = try c.query("""
            SELECT min(position) AS first, max(position) AS last
              FROM (SELECT position FROM ledger.events
                     WHERE recorded_at >= ledger.from_micros($1) AND recorded_at < ledger.from_micros($2) OFFSET 0) AS period
            """, [.int(from.microseconds), .int(to.microseconds)])
        guard r.count == 1, let first = try r.value(0, "first").flatMap(Int64.init),
              let last = try r.value(0, "last").flatMap(Int64.init) else { return nil }
        return first...last
    }

    /// Hands each event of `bounds` widened by one position on each side, read in place, to
    /// `each`, in ledger order. `each` runs while the COPY streams: it must not use `c`,
    /// nor keep the row.
    package func run(_ bounds: ClosedRange<Int64>, on c: PostgresConnection,
                     each: (EventCopyRow, _ inPeriod: Bool) throws -> Void) throws {
        // COPY takes no parameters: the values reach it as settings of this transaction.
        try c.query("SELECT set_config('ledger.export_first', $1, true), set_config('ledger.export_last', $2, true)",
                    [.int(bounds.lowerBound - 1), .int(bounds.upperBound + 1)])
        let (from, to) = (from.microseconds, to.microseconds)
        var reader = BinaryCopyReader()
        try c.copyOut(Self.sql) { piece in
            try reader.read(piece) { row in
                let event = try EventCopyRow(row)
                try each(event, event.recordedAt.microseconds >= from && event.recordedAt.microseconds < to)
            }
        }
        try reader.finish()
    }

    /// The columns ChainHash hashes, in `EventCopyRow`'s order.
    static let sql = """
        COPY (SELECT position, event_id::text, stream, stream_version, type, source, payload::text,
                     raw, metadata::text, idempotency_key, recorded_at, observed_at, hash
                FROM ledger.events
               WHERE position BETWEEN current_setting('ledger.export_first')::bigint
                                  AND current_setting('ledger.export_last')::bigint
               ORDER BY position)
          TO STDOUT (FORMAT binary)
        """
}
