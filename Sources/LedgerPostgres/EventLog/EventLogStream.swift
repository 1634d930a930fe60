import LedgerCore

/// The log after a position, in ledger order, read with one binary COPY (or through a
/// cursor, a few rows a FETCH): what a walk of the hash chain from that position needs
/// (`ChainContinuation`), streamed, its memory flat. One statement, so one snapshot: a
/// prefix of the log as it was committed when the read began (appends take positions in
/// order under the append lock).
package struct EventLogStream {
    /// Events `runWhole` holds back, waiting for the positions before them.
    package var reorderLimit = 4096

    package init() {}

    /// Hands each event after `position`, read in place, to `each`, in order. `each` runs
    /// while the rows stream: it must not use `connection`, nor keep the row. If it
    /// throws, the read stops and its error is rethrown. One statement, so one snapshot.
    /// `fetching`: through a cursor, that many rows a FETCH (as `runWhole`), else one COPY.
    package func run(after position: Int64, on connection: PostgresConnection, fetching batch: Int? = nil,
                     each: (EventCopyRow) throws -> Void) throws {
        if let batch {
            return try Self.fetch(Self.afterSQL, [.int(position)], batch: batch, on: connection) { try each(EventCopyRow($0)) }
        }
        // COPY takes no parameters: the position goes through a setting.
        try connection.query("SELECT set_config('ledger.stream_after', $1, false)", [.text(String(position))])
        var reader = BinaryCopyReader()
        try connection.copyOut(Self.sql) { piece in
            try reader.read(piece) { row in try each(EventCopyRow(row)) }
        }
        try reader.finish()
    }

    /// Hands every event to `each`, in ledger order, as `run(after: 0)` does, but reads the
    /// table as it lies, by a sequential scan: PostgreSQL reads it through a small ring of
    /// buffers instead of the whole shared buffer cache, which a walk of the primary key
    /// fills with the log, pushing out the pages the service's writes need. The table lies
    /// in ledger order (appends take positions in order), but for space an aborted append
    /// left and a later one reused: an event up to `reorderLimit` events out of place is held
    /// until the ones before it have passed; should one lie further away, the rest is read by
    /// the primary key from the first position not yet handed out (a new statement, so a
    /// later snapshot: a longer prefix of the log). Run it outside a transaction.
    ///
    /// `fetching`: read through a cursor, that many rows a FETCH, instead of one COPY (the
    /// read by the primary key too), so that PostgreSQL works only when `each` has used up
    /// the rows before (a paced reader's pauses then pace PostgreSQL's reading too; a COPY
    /// runs ahead by megabytes at a time).
    package func runWhole(on connection: PostgresConnection, fetching batch: Int? = nil,
                          each: (EventCopyRow) throws -> Void) throws {
        // One backend, from the table's first block (not joining another scan midway).
        try connection.query("""
            SELECT set_config('synchronize_seqscans', 'off', false),
                   set_config('max_parallel_workers_per_gather', '0', false)
            """)
        var next: Int64 = 1
        var held: [Int64: BinaryCopyRow.Owned] = [:]   // copied out of the row's buffer
        func inOrder(_ row: BinaryCopyRow) throws {
            let event = try EventCopyRow(row)
            guard event.position > next else {
                try each(event)   // in place (or below it, which the walk names)
                next = max(next, event.position + 1)
                while let following = held.removeValue(forKey: next) {
                    try following.withRow { try each(EventCopyRow($0)) }
                    next += 1
                }
                return
            }
            held[event.position] = row.owned()
            if held.count > reorderLimit { throw OutOfPlace() }
        }
        do {
            if let batch {
                try Self.fetch("SELECT \(Self.columns) FROM ledger.events", batch: batch, on: connection, row: inOrder)
            } else {
                var reader = BinaryCopyReader()
                try connection.copyOut(Self.wholeSQL) { piece in try reader.read(piece, row: inOrder) }
                try reader.finish()
            }
        } catch is OutOfPlace {
            try run(after: next - 1, on: connection, fetching: batch, each: each)
            return
        }
        // A position missing from the log: what is held goes on in order, and the walk names the gap.
        for (_, event) in held.sorted(by: { $0.key < $1.key }) { try event.withRow { try each(EventCopyRow($0)) } }
    }

    private struct OutOfPlace: Error {}

    /// Hands each row of `select` to `row`, read through a cursor `batch` rows a FETCH, in
    /// binary, in one transaction (so one snapshot).
    private static func fetch(_ select: String, _ parameters: [SQLValue] = [], batch: Int, on connection: PostgresConnection,
                              row: (BinaryCopyRow) throws -> Void) throws {
        try connection.transaction { c in
            try c.query("DECLARE ledger_log NO SCROLL CURSOR FOR \(select)", parameters)
            while try c.fetchBinary("FETCH FORWARD \(batch) FROM ledger_log", row: row) == batch {}
        }
    }

    /// The columns ChainHash hashes, in `EventCopyRow`'s order.
    static let columns = """
        position, event_id::text, stream, stream_version, type, source, payload::text,
        raw, metadata::text, idempotency_key, recorded_at, observed_at, hash
        """

    /// The events after the position `$1`, by the primary key.
    static let afterSQL = "SELECT \(columns) FROM ledger.events WHERE position > $1 ORDER BY position"

    static let sql = """
        COPY (SELECT \(columns)
                FROM ledger.events
               WHERE position > current_setting('ledger.stream_after')::bigint
               ORDER BY position)
          TO STDOUT (FORMAT binary)
        """

    static let wholeSQL = "COPY (SELECT \(columns) FROM ledger.events) TO STDOUT (FORMAT binary)"
}
