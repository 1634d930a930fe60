import LedgerCore

/// Input for `COPY ... FROM STDIN (FORMAT binary)` of any table: the header,
/// each row as its field count then every field as a length and its bytes
/// (length -1 for NULL), and the trailer. Fields go in the order the COPY
/// statement lists its columns, each in its type's binary form.
public struct BinaryCopyRows: Sendable {
    private var bytes: [UInt8]
    public private(set) var rows = 0
    /// Fields the current row declared and those appended so far (checked in debug
    /// builds, so a column list and its writer cannot drift apart unnoticed in tests).
    private var declared = 0
    private var appended = 0

    public init(capacity: Int = 4096) {
        bytes = CopyBinary.header()
        bytes.reserveCapacity(capacity)
    }

    public mutating func startRow(fields: Int16) {
        assert(rows == 0 || appended == declared, "COPY row \(rows) declared \(declared) fields and got \(appended)")
        BinaryField.appendInt16(&bytes, fields)
        rows += 1
        declared = Int(fields)
        appended = 0
    }

    public mutating func appendNull() { field { BinaryField.appendInt32(&$0, -1) } }

    private mutating func field(_ write: (inout [UInt8]) -> Void) {
        write(&bytes)
        appended += 1
    }

    /// text (or varchar) as UTF-8.
    public mutating func append(text: String?) {
        guard let text else { return appendNull() }
        field { BinaryField.appendLengthPrefixed(&$0, text) }
    }

    /// text given as its UTF-8 bytes.
    public mutating func append(utf8: [UInt8]?) {
        guard let utf8 else { return appendNull() }
        field { BinaryField.appendLengthPrefixed(&$0, utf8) }
    }

    public mutating func append(int16 value: Int16?) {
        guard let value else { return appendNull() }
        field { BinaryField.appendInt32(&$0, 2); BinaryField.appendInt16(&$0, value) }
    }

    public mutating func append(int32 value: Int32?) {
        guard let value else { return appendNull() }
        field { BinaryField.appendInt32(&$0, 4); BinaryField.appendInt32(&$0, value) }
    }

    public mutating func append(int64 value: Int64?) {
        guard let value else { return appendNull() }
        field { BinaryField.appendInt32(&$0, 8); BinaryField.appendInt64(&$0, value) }
    }

    public mutating func append(bool value: Bool?) {
        guard let value else { return appendNull() }
        field { BinaryField.appendInt32(&$0, 1); $0.append(value ? 1 : 0) }
    }

    /// timestamptz: microseconds since 2000-01-01 UTC.
    public mutating func append(timestamp value: Timestamp?) {
        guard let value else { return appendNull() }
        field { BinaryField.appendInt32(&$0, 8); BinaryField.appendInt64(&$0, value.microseconds - CopyBinary.postgresEpochMicros) }
    }

    /// Bytes held so far, after whole rows (the header with the first piece), handed out
    /// to be sent while the next rows are written; `finish` then returns the rest.
    public mutating func takePiece() -> [UInt8] {
        assert(rows == 0 || appended == declared, "COPY row \(rows) declared \(declared) fields and got \(appended)")
        defer { bytes.removeAll(keepingCapacity: true) }
        return bytes
    }

    /// Bytes held, to decide when to send a piece.
    public var count: Int { bytes.count }

    /// The whole input, trailer included (call once, after the last row).
    public mutating func finish() -> [UInt8] {
        assert(rows == 0 || appended == declared, "COPY row \(rows) declared \(declared) fields and got \(appended)")
        CopyBinary.appendTrailer(&bytes)
        return bytes
    }
}
