import LedgerCore
@testable import LedgerPostgres

extension StoredEvent {
    /// The whole event of a row of a binary COPY of `position, event_id::text, stream,
    /// stream_version, type, source, payload::text, raw, metadata::text, idempotency_key,
    /// recorded_at, observed_at, hash`, each text decoded as a String: the reference an
    /// event read in place (`EventCopyRow`) must read as.
    init(copyRow row: BinaryCopyRow) throws {
        guard row.count >= 13 else { throw PostgresError.unexpectedResult("an event row of \(row.count) columns") }
        self.init(
            position: try row.int64(0), eventID: row.string(1) ?? "", stream: row.string(2) ?? "",
            streamVersion: Int(try row.int32(3)), type: row.string(4) ?? "", source: row.string(5) ?? "",
            payloadJSON: row.string(6) ?? "", raw: row.bytes(7), metadataJSON: row.string(8) ?? "",
            idempotencyKey: row.string(9) ?? "", recordedAt: try row.timestamp(10) ?? Timestamp(microseconds: 0),
            observedAt: try row.timestamp(11) ?? Timestamp(microseconds: 0), hash: row.bytes(12) ?? [])
    }
}
