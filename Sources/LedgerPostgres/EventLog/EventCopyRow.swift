import Glibc
import LedgerCore

/// A row of a binary COPY of the columns ChainHash hashes (`position, event_id::text,
/// stream, stream_version, type, source, payload::text, raw, metadata::text,
/// idempotency_key, recorded_at, observed_at, hash`), read in place: what a scan of the
/// whole log checks and folds without making a `StoredEvent` (a string or an array for
/// each of its columns) of every event. Valid only while the reader hands the row out.
package struct EventCopyRow {
    package let row: BinaryCopyRow
    package let position: Int64
    package let streamVersion: Int32
    package let recordedAt: Timestamp
    package let observedAt: Timestamp

    package init(_ row: BinaryCopyRow) throws {
        guard row.count >= 13 else { throw PostgresError.unexpectedResult("an event row of \(row.count) columns") }
        self.row = row
        position = try row.int64(0)
        streamVersion = try row.int32(3)
        recordedAt = try row.timestamp(10) ?? Timestamp(microseconds: 0)
        observedAt = try row.timestamp(11) ?? Timestamp(microseconds: 0)
    }

    package var stream: String { row.string(2) ?? "" }
    package var type: String { row.string(4) ?? "" }
    package var source: String { row.string(5) ?? "" }
    /// The raw body's bytes, when stored.
    package var raw: [UInt8]? { row.bytes(7) }

    /// The payload column (`payload::text`) parsed, read where it lies.
    package func payload() throws -> JSONValue { try json(6) }
    /// The metadata column (`metadata::text`) parsed, read where it lies.
    package func metadata() throws -> JSONValue { try json(8) }

    private func json(_ i: Int) throws -> JSONValue {
        try withText(i) { utf8 in try JSONValue.parse(stored: utf8.assumingMemoryBound(to: UInt8.self)) }
    }

    /// A text field's bytes as a `StoredEvent` holds them (NULL as empty): in place
    /// when they are ASCII, the common case; otherwise as `String(decoding:as:)` makes them
    /// (the same bytes when they are valid UTF-8, as a UTF-8 database guarantees; each
    /// invalid sequence replaced by U+FFFD when they are not).
    private func withText<R>(_ i: Int, _ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        guard let field = row.buffer(i), field.count > 0 else { return try body(UnsafeRawBufferPointer(start: nil, count: 0)) }
        if Self.isASCII(field) { return try body(field) }
        var text = String(decoding: field, as: UTF8.self)
        return try text.withUTF8 { try body(UnsafeRawBufferPointer($0)) }
    }

    /// Whether every byte is below 0x80, eight at a time.
    package static func isASCII(_ bytes: UnsafeRawBufferPointer) -> Bool {
        var i = 0
        while i + 8 <= bytes.count {
            if bytes.loadUnaligned(fromByteOffset: i, as: UInt64.self) & 0x8080_8080_8080_8080 != 0 { return false }
            i += 8
        }
        while i < bytes.count {
            if bytes[i] >= 0x80 { return false }
            i += 1
        }
        return true
    }

    /// The canonical event, as `EventMapping.recorded` makes it of the `StoredEvent` (the
    /// metadata's error before the payload's).
    package func recorded() throws -> RecordedEvent { try recorded(metadata: metadata()) }

    /// The canonical event, the metadata column parsed already.
    package func recorded(metadata: JSONValue) throws -> RecordedEvent {
        try RecordedEvent(type: type, payload: payload(), observedAt: observedAt, metadata: metadata,
                          position: position, recordedAt: recordedAt)
    }

    /// Whether the stored hash is sha256(`previous` || content), the content encoded as
    /// `ChainHash.hash(previous:event:)` encodes a `StoredEvent` of this row (a NULL text
    /// as the empty text, a NULL time as 0, text as `withText` reads it): the same bytes,
    /// taken from the row where they lie. `scratch` is reused from row to row.
    package func hashMatches(previous: [UInt8], scratch: inout [UInt8]) -> Bool {
        scratch.removeAll(keepingCapacity: true)
        scratch.append(contentsOf: previous)
        BinaryField.appendInt64(&scratch, position)
        appendText(1, &scratch)
        appendText(2, &scratch)
        BinaryField.appendInt32(&scratch, streamVersion)
        appendText(4, &scratch)
        appendText(5, &scratch)
        appendText(6, &scratch)
        if let raw = row.buffer(7) { appendLengthPrefixed(raw, &scratch) } else { BinaryField.appendInt32(&scratch, -1) }
        appendText(8, &scratch)
        appendText(9, &scratch)
        BinaryField.appendInt64(&scratch, recordedAt.microseconds)
        BinaryField.appendInt64(&scratch, observedAt.microseconds)
        let computed = Crypto.sha256(scratch)
        guard let stored = row.buffer(12), stored.count == computed.count else { return false }
        return computed.withUnsafeBytes { memcmp($0.baseAddress!, stored.baseAddress!, stored.count) == 0 }
    }

    private func appendText(_ i: Int, _ out: inout [UInt8]) {
        withText(i) { appendLengthPrefixed($0, &out) }
    }

    private func appendLengthPrefixed(_ field: UnsafeRawBufferPointer, _ out: inout [UInt8]) {
        BinaryField.appendInt32(&out, Int32(truncatingIfNeeded: field.count))
        out.append(contentsOf: field)
    }
}
