import Foundation
import LedgerCore

/// The fast way to append a batch of new events: the writer, holding the
/// append lock, numbers the events and computes their hash chain itself (the
/// content encoding of ChainHash), then inserts the batch in one statement.
/// PostgreSQL then does only the insert, instead of the per-event work of
/// `ledger.append_events`.
///
/// Everything that does not depend on the event's place in the log is
/// prepared by the submitting thread (`Prepared`), so the single writer only
/// assembles, hashes and sends.
///
/// It applies when every key is new and unique in the batch and no item
/// carries an expected version; otherwise, or when a payload's text is not
/// exactly what jsonb prints (JSONBText), it inserts nothing and answers nil,
/// and the caller uses `ledger.append_events`, whose answers are the same.
struct ChainedAppend {
    /// The parts of one event's hashed content and insert row that are known before it is numbered.
    struct Prepared: Sendable {
        let eventID: String
        /// ChainHash's length-prefixed fields, split where the position-dependent ones go.
        let eventIDField: [UInt8]
        let streamField: [UInt8]
        let restFields: [UInt8]          // type … idempotency key
        let observedMicros: Int64
        /// The insert row's JSON after the writer's fields: `,"stream":…}`.
        let rowTail: String

        init(_ e: NewEvent) {
            eventID = UUID().uuidString.lowercased()
            eventIDField = ChainHash.field(eventID)
            streamField = ChainHash.field(e.stream)
            var rest = ChainHash.field(e.type) + ChainHash.field(e.source) + ChainHash.field(e.payloadJSON)
            if let raw = e.raw {
                ChainHash.appendInt32(&rest, Int32(truncatingIfNeeded: raw.count))
                rest += raw
            } else {
                ChainHash.appendInt32(&rest, -1)
            }
            rest += ChainHash.field(e.metadataJSON) + ChainHash.field(e.idempotencyKey)
            restFields = rest
            observedMicros = e.observedAt.microseconds
            var tail = ",\"stream\":" + JSONSerializer.string(.string(e.stream))
            tail += ",\"type\":" + JSONSerializer.string(.string(e.type))
            tail += ",\"source\":" + JSONSerializer.string(.string(e.source))
            tail += ",\"payload\":" + JSONSerializer.string(.string(e.payloadJSON))
            tail += ",\"raw\":" + (e.raw.map { "\"" + Hex.encode($0) + "\"" } ?? "null")
            tail += ",\"metadata\":" + JSONSerializer.string(.string(e.metadataJSON))
            tail += ",\"idempotency_key\":" + JSONSerializer.string(.string(e.idempotencyKey))
            tail += ",\"observed_us\":" + String(observedMicros) + "}"
            rowTail = tail
        }
    }

    func append(_ events: [NewEvent], prepared: [Prepared], on c: PostgresConnection) throws -> [AppendOutcome]? {
        guard !events.isEmpty, events.allSatisfy({ $0.expectedVersion == nil }) else { return nil }
        let keys = events.map(\.idempotencyKey)
        guard Set(keys).count == keys.count else { return nil }

        // The lock first, in its own statement, so the reads below see every
        // append that committed while this one waited.
        try c.query("SELECT pg_advisory_xact_lock(7413001)")
        let head = try c.query("""
            SELECT (SELECT e.position FROM ledger.events e ORDER BY e.position DESC LIMIT 1) AS head_position,
                   (SELECT e.hash FROM ledger.events e ORDER BY e.position DESC LIMIT 1) AS head_hash,
                   ledger.micros(clock_timestamp()) AS now_us,
                   (SELECT count(*) FROM ledger.events e WHERE e.idempotency_key = ANY($1::text[])) AS existing
            """, [.text(Self.arrayLiteral(keys))])
        guard try head.int64(0, "existing") == 0 else { return nil }
        var position = try head.value(0, "head_position").flatMap(Int64.init) ?? 0
        var previous = try head.bytes(0, "head_hash") ?? ChainHash.genesis
        let recordedAt = Timestamp(microseconds: try head.int64(0, "now_us"))

        let streams = Array(Set(events.map(\.stream)))
        let versionRows = try c.query("""
            SELECT e.stream, max(e.stream_version) AS version FROM ledger.events e
             WHERE e.stream = ANY($1::text[]) GROUP BY e.stream
            """, [.text(Self.arrayLiteral(streams))])
        var versions: [String: Int] = [:]
        for r in 0..<versionRows.count { versions[try versionRows.string(r, "stream")] = Int(try versionRows.int64(r, "version")) }

        var receipts: [EventReceipt] = []
        receipts.reserveCapacity(events.count)
        var rows = "["
        rows.reserveCapacity(prepared.reduce(2) { $0 + $1.rowTail.utf8.count + 160 })
        var message = [UInt8]()
        for (i, p) in prepared.enumerated() {
            position += 1
            let stream = events[i].stream
            let version = (versions[stream] ?? 0) + 1
            versions[stream] = version
            message.removeAll(keepingCapacity: true)
            message += previous
            ChainHash.appendInt64(&message, position)
            message += p.eventIDField
            message += p.streamField
            ChainHash.appendInt32(&message, Int32(truncatingIfNeeded: version))
            message += p.restFields
            ChainHash.appendInt64(&message, recordedAt.microseconds)
            ChainHash.appendInt64(&message, p.observedMicros)
            let hash = Crypto.sha256(message)
            previous = hash
            receipts.append(EventReceipt(position: position, eventID: p.eventID, streamVersion: version,
                                         recordedAt: recordedAt, hash: hash))
            if i > 0 { rows += "," }
            rows += "{\"position\":" + String(position) + ",\"event_id\":\"" + p.eventID
            rows += "\",\"stream_version\":" + String(version) + ",\"hash\":\"" + Hex.encode(hash) + "\""
            rows += p.rowTail
        }
        rows += "]"

        // Inserts only if PostgreSQL prints every payload and metadata exactly as
        // hashed; otherwise nothing, and the caller takes the slow path.
        let inserted = try c.query("""
            WITH r AS (
                SELECT r.*, r.payload::jsonb AS payload_jsonb, r.metadata::jsonb AS metadata_jsonb
                  FROM jsonb_to_recordset($1::jsonb) AS r(
                       position bigint, event_id uuid, stream text, stream_version integer, type text, source text,
                       payload text, raw text, metadata text, idempotency_key text, observed_us bigint, hash text)
            ), mismatch AS (
                SELECT 1 FROM r WHERE r.payload_jsonb::text <> r.payload OR r.metadata_jsonb::text <> r.metadata LIMIT 1
            ), ins AS (
                INSERT INTO ledger.events (position, event_id, stream, stream_version, type, source, payload, raw,
                                           metadata, idempotency_key, recorded_at, observed_at, hash)
                SELECT r.position, r.event_id, r.stream, r.stream_version, r.type, r.source, r.payload_jsonb,
                       decode(r.raw, 'hex'), r.metadata_jsonb, r.idempotency_key, ledger.from_micros($2),
                       ledger.from_micros(r.observed_us), decode(r.hash, 'hex')
                  FROM r WHERE NOT EXISTS (SELECT 1 FROM mismatch)
                RETURNING 1
            )
            SELECT count(*) AS n FROM ins
            """, [.text(rows), .int(recordedAt.microseconds)])
        guard try inserted.int64(0, "n") == Int64(events.count) else { return nil }
        return receipts.map { .appended($0) }
    }

    /// A text[] literal: every element quoted, `"` and `\` escaped.
    static func arrayLiteral(_ items: [String]) -> String {
        "{" + items.map { item in
            "\"" + item.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"") + "\""
        }.joined(separator: ",") + "}"
    }
}
