import LedgerCore

/// Reads and appends `ledger.events`. Stateless: every call takes the
/// connection to use, so callers decide the transaction boundaries.
public struct EventStore: Sendable {
    public init() {}

    /// Appends `events` in the caller's transaction. The caller's transaction
    /// holds the ledger's append lock from here to its commit.
    public func append(_ events: [NewEvent], on connection: PostgresConnection) throws -> [AppendOutcome] {
        try append(prepared: events.map(PreparedEvent.init), on: connection)
    }

    /// Appends events already prepared (callers prepare them on their own
    /// threads, off the single writer's path). The writer builds the hash chain
    /// and sends the rows with COPY (ChainAppend); a batch with an item it
    /// cannot render goes through ledger.append_events, which names the error.
    ///
    /// `cache`: the single writer's knowledge of stream versions as of its last
    /// commit (the caller commits or invalidates it after the transaction).
    ///
    /// `hints`: the single writer's memory of the keys and streams it sent, to skip
    /// probes for the rest (`ProbeHints`); the append may then throw `ProbeHintMiss`.
    ///
    /// `whileStoring`: see `ChainAppend.append`; never called on the SQL path.
    public func append(prepared items: [PreparedEvent], on connection: PostgresConnection,
                       cache: StreamVersionCache? = nil, hints: ProbeHints? = nil,
                       whileStoring: (([AppendOutcome]) throws -> Void)? = nil) throws -> [AppendOutcome] {
        if items.isEmpty { return [] }
        if items.allSatisfy({ $0.chain != nil }) {
            return try ChainAppend.append(items, on: connection, cache: cache, hints: hints, whileStoring: whileStoring)
        }
        cache?.invalidate()
        return try append(encoded: items.map { Self.itemJSON($0.event) }, on: connection)
    }

    /// Counts one more redelivery of the event at `position` (a delivery the caller
    /// found to be the same as that stored event, where the append saw a key conflict).
    public func countRedelivery(of position: Int64, on connection: PostgresConnection) throws {
        try connection.query("""
            INSERT INTO ledger.redeliveries AS r (position, count, last_seen_at) VALUES ($1, 1, now())
            ON CONFLICT ON CONSTRAINT redeliveries_pkey
            DO UPDATE SET count = r.count + 1, last_seen_at = excluded.last_seen_at
            """, [.int(position)])
    }

    /// How many times each of the events at `positions` was delivered again (absent: never).
    public func redeliveries(at positions: [Int64], on connection: PostgresConnection) throws -> [Int64: Int64] {
        let rows = try connection.query("SELECT position, count FROM ledger.redeliveries WHERE position = ANY($1::bigint[])",
                                        [.text("{" + positions.map(String.init).joined(separator: ",") + "}")])
        var counts: [Int64: Int64] = [:]
        for r in 0..<rows.count { counts[try rows.int64(r, "position")] = try rows.int64(r, "count") }
        return counts
    }

    /// The stream and type of the event at `position`, if there is one.
    public func streamAndType(at position: Int64, on connection: PostgresConnection) throws -> (stream: String, type: String)? {
        let r = try connection.query("SELECT stream, type FROM ledger.events WHERE position = $1", [.int(position)])
        return r.count == 0 ? nil : (try r.string(0, "stream"), try r.string(0, "type"))
    }

    /// The raw bytes stored with the event at `position` (nil when it has none, or there is no such event).
    public func raw(at position: Int64, on connection: PostgresConnection) throws -> [UInt8]? {
        let r = try connection.query("SELECT raw FROM ledger.events WHERE position = $1", [.int(position)])
        return r.count == 0 ? nil : try r.bytes(0, "raw")
    }

    /// The newest event of `stream` (its receipt and idempotency key), if it has any.
    public func newest(inStream stream: String, on connection: PostgresConnection) throws -> (receipt: EventReceipt, idempotencyKey: String)? {
        let r = try connection.query("""
            SELECT position, event_id::text AS event_id, stream_version,
                   ledger.micros(recorded_at) AS recorded_us, hash, idempotency_key
              FROM ledger.events
             WHERE stream = $1
             ORDER BY stream_version DESC
             LIMIT 1
            """, [.text(stream)])
        guard r.count == 1 else { return nil }
        return (try Self.receipt(r), try r.string(0, "idempotency_key"))
    }

    /// The highest stored position below `position`, nil when there is none: where a run of
    /// missing events begins, seen from the event after it.
    public func highestPosition(below position: Int64, on connection: PostgresConnection) throws -> Int64? {
        try connection.query("SELECT max(position) AS below FROM ledger.events WHERE position < $1", [.int(position)])
            .value(0, "below").flatMap(Int64.init)
    }

    /// How many of a stream's events came from a client (relayed SDK callbacks).
    public func clientEvents(inStream stream: String, on connection: PostgresConnection) throws -> Int64 {
        try connection.query("""
            SELECT count(*) AS n
              FROM ledger.events
             WHERE stream = $1 AND source = 'client'
            """, [.text(stream)]).int64(0, "n")
    }

    /// The event stored under idempotency key `key`, with its stream and type, if there is one.
    public func keyed(_ key: String, on connection: PostgresConnection) throws -> (receipt: EventReceipt, stream: String, type: String)? {
        let r = try connection.query("""
            SELECT position, event_id::text AS event_id, stream_version,
                   ledger.micros(recorded_at) AS recorded_us, hash, stream, type
              FROM ledger.events
             WHERE idempotency_key = $1
            """, [.text(key)])
        guard r.count == 1 else { return nil }
        return (try Self.receipt(r), try r.string(0, "stream"), try r.string(0, "type"))
    }

    /// The receipt in the first row of a result with its columns.
    private static func receipt(_ r: QueryResult) throws -> EventReceipt {
        EventReceipt(position: try r.int64(0, "position"), eventID: try r.string(0, "event_id"),
                     streamVersion: Int(try r.int64(0, "stream_version")),
                     recordedAt: Timestamp(microseconds: try r.int64(0, "recorded_us")),
                     hash: try r.bytes(0, "hash") ?? [])
    }

    /// Appends items encoded with `itemJSON` through `ledger.append_events`
    /// (one round trip for the whole batch; the hash chain built in SQL).
    public func append(encoded items: [String], on connection: PostgresConnection) throws -> [AppendOutcome] {
        if items.isEmpty { return [] }
        let batch = "[" + items.joined(separator: ",") + "]"
        let result = try connection.query("SELECT * FROM ledger.append_events($1::jsonb)", [.text(batch)])
        guard result.count == items.count else {
            throw PostgresError.unexpectedResult("append_events answered \(result.count) rows for \(items.count) events")
        }
        var outcomes = [AppendOutcome]()
        outcomes.reserveCapacity(items.count)
        for row in 0..<result.count {
            let outcome = try result.string(row, "outcome")
            if outcome == "version_conflict" {
                outcomes.append(.versionConflict(currentVersion: Int(try result.int64(row, "stream_version"))))
                continue
            }
            let receipt = EventReceipt(
                position: try result.int64(row, "position"),
                eventID: try result.string(row, "event_id"),
                streamVersion: Int(try result.int64(row, "stream_version")),
                recordedAt: try Self.timestamp(result.string(row, "recorded_at")),
                hash: try result.bytes(row, "hash") ?? [])
            switch outcome {
            case "appended": outcomes.append(.appended(receipt))
            case "duplicate": outcomes.append(.duplicate(receipt, redeliveries: try result.int64(row, "redeliveries")))
            default: outcomes.append(.keyConflict(existing: receipt))
            }
        }
        return outcomes
    }

    static let columns = """
        position, event_id::text AS event_id, stream, stream_version, type, source, payload::text AS payload,
        raw, metadata::text AS metadata, idempotency_key,
        ledger.micros(recorded_at) AS recorded_us, ledger.micros(observed_at) AS observed_us, hash
        """

    /// Takes the ledger's append lock (in the caller's transaction) and answers PostgreSQL's
    /// clock once it holds it, in microseconds.
    public func appendLockTime(on connection: PostgresConnection) throws -> Int64 {
        try connection.query(ChainAppend.appendLockSQL).int64(0, "now_us")
    }

    /// How long before it takes the append lock an append may have taken its recording
    /// time (a batch that skips a round trip); beyond it the batch is retried.
    public static let recordingLagLimitMicros = ChainAppend.recordingLagLimitMicros

    /// A stream's events below `position`, or recorded before `recordedBefore`, in ledger
    /// order (what a fold needs, for exports; `raw` too, so that their hashes can be checked).
    public func readForReplay(stream: String, below position: Int64 = .max, recordedBefore: Timestamp? = nil,
                     on connection: PostgresConnection) throws -> [StoredEvent] {
        try Self.events(connection.query("""
            SELECT position, event_id::text AS event_id, stream, stream_version, type, source, payload::text AS payload,
                   raw, metadata::text AS metadata, idempotency_key,
                   ledger.micros(recorded_at) AS recorded_us, ledger.micros(observed_at) AS observed_us, hash
              FROM ledger.events
             WHERE stream = $1 AND position < $2 AND ($3::bigint IS NULL OR recorded_at < ledger.from_micros($3))
             ORDER BY stream_version
            """, [.text(stream), .int(position), recordedBefore.map { .int($0.microseconds) } ?? .null]))
    }

    /// Events with position > `after`, in ledger order, at most `limit`.
    public func read(after: Int64, limit: Int, on connection: PostgresConnection) throws -> [StoredEvent] {
        let result = try connection.query(
            "SELECT \(Self.columns) FROM ledger.events WHERE position > $1 ORDER BY position LIMIT $2",
            [.int(after), .int(Int64(limit))])
        return try Self.events(result)
    }

    /// One stream's events in order (an order's history).
    public func read(stream: String, on connection: PostgresConnection) throws -> [StoredEvent] {
        let result = try connection.query(
            "SELECT \(Self.columns) FROM ledger.events WHERE stream = $1 ORDER BY position", [.text(stream)])
        return try Self.events(result)
    }

    /// Several streams' events at once, each stream's in order (one query for a page of orders).
    public func read(streams: [String], on connection: PostgresConnection) throws -> [String: [StoredEvent]] {
        if streams.isEmpty { return [:] }
        let result = try connection.query(
            "SELECT \(Self.columns) FROM ledger.events WHERE stream = ANY($1::text[]) ORDER BY position",
            [ChainAppend.textArray(streams)])
        return Dictionary(grouping: try Self.events(result), by: \.stream)
    }

    /// Many streams' events below `position`, in ledger order, by
    /// stream (one round trip: an events export folds a batch's new orders with it).
    public func readForReplay(streams: [String], below position: Int64, on connection: PostgresConnection) throws -> [String: [StoredEvent]] {
        if streams.isEmpty { return [:] }
        let result = try connection.query("""
            SELECT position, event_id::text AS event_id, stream, stream_version, type, source, payload::text AS payload,
                   raw, metadata::text AS metadata, idempotency_key,
                   ledger.micros(recorded_at) AS recorded_us, ledger.micros(observed_at) AS observed_us, hash
              FROM ledger.events
             WHERE stream = ANY($1::text[]) AND position < $2
             ORDER BY position
            """, [ChainAppend.textArray(streams), .int(position)])
        return Dictionary(grouping: try Self.events(result), by: \.stream)
    }

    /// The newest event's position and hash; (0, 32 zero bytes) when empty.
    public func head(on connection: PostgresConnection) throws -> (position: Int64, hash: [UInt8]) {
        let result = try connection.query("SELECT position, hash FROM ledger.events ORDER BY position DESC LIMIT 1")
        guard result.count == 1 else { return (0, ChainHash.genesis) }
        return (try result.int64(0, "position"), try result.bytes(0, "hash") ?? [])
    }

    /// How many times the event at `position` was redelivered.
    public func redeliveries(position: Int64, on connection: PostgresConnection) throws -> Int64 {
        let result = try connection.query("SELECT count FROM ledger.redeliveries WHERE position = $1", [.int(position)])
        return result.count == 0 ? 0 : try result.int64(0, "count")
    }

    static func events(_ result: QueryResult) throws -> [StoredEvent] {
        var out = [StoredEvent]()
        out.reserveCapacity(result.count)
        for r in 0..<result.count {
            out.append(StoredEvent(
                position: try result.int64(r, "position"),
                eventID: try result.string(r, "event_id"),
                stream: try result.string(r, "stream"),
                streamVersion: Int(try result.int64(r, "stream_version")),
                type: try result.string(r, "type"),
                source: try result.string(r, "source"),
                payloadJSON: try result.string(r, "payload"),
                raw: try result.bytes(r, "raw"),
                metadataJSON: try result.string(r, "metadata"),
                idempotencyKey: try result.string(r, "idempotency_key"),
                recordedAt: Timestamp(microseconds: try result.int64(r, "recorded_us")),
                observedAt: Timestamp(microseconds: try result.int64(r, "observed_us")),
                hash: try result.bytes(r, "hash") ?? []))
        }
        return out
    }

    static func timestamp(_ text: String) throws -> Timestamp {
        // Sessions run with TimeZone UTC and ISO DateStyle: "2026-11-29 11:45:35.123456+00".
        var t = text
        if t.hasSuffix("+00") { t = String(t.dropLast(3)) + "Z" }
        guard let ts = Timestamp.parse(t, lenient: true) else {
            throw PostgresError.unexpectedResult("unreadable timestamp \(text)")
        }
        return ts
    }

    /// One event as an item of `ledger.append_events`' batch parameter.
    public static func itemJSON(_ e: NewEvent) -> String {
        var out = "{\"stream\":" + JSONSerializer.string(.string(e.stream))
        out += ",\"type\":" + JSONSerializer.string(.string(e.type))
        out += ",\"source\":" + JSONSerializer.string(.string(e.source))
        out += ",\"payload\":" + e.payloadJSON
        out += ",\"raw\":" + (e.raw.map { "\"" + Hex.encode($0) + "\"" } ?? "null")
        out += ",\"metadata\":" + e.metadataJSON
        out += ",\"key\":" + JSONSerializer.string(.string(e.idempotencyKey))
        out += ",\"observedAtMicros\":\"" + String(e.observedAt.microseconds) + "\""
        if let v = e.expectedVersion { out += ",\"expectedVersion\":" + String(v) }
        return out + "}"
    }
}
