import LedgerCore

/// A one-dimensional array parameter in PostgreSQL's binary format, built
/// element by element: many rows travel as one array a column (`unnest($1, $2,
/// ...)`) without being rendered as text and parsed again on the server.
///
/// Format (array_send): dimensions (1), has-nulls flag, element type, then
/// for the one dimension its length and lower bound (1), then each element
/// as a length (-1 for NULL) and its binary form.
public struct BinaryArray: Sendable {
    /// The element types this encoder writes, with their array types.
    public enum Element: Sendable {
        case text, int16, int32, int64, bool, timestamptz, jsonb

        var elementOID: UInt32 {
            switch self {
            case .text: 25
            case .int16: 21
            case .int32: 23
            case .int64: 20
            case .bool: 16
            case .timestamptz: 1184
            case .jsonb: 3802
            }
        }

        var arrayOID: UInt32 {
            switch self {
            case .text: 1009
            case .int16: 1005
            case .int32: 1007
            case .int64: 1016
            case .bool: 1000
            case .timestamptz: 1185
            case .jsonb: 3807
            }
        }
    }

    public let element: Element
    private var body: [UInt8] = []
    private var count: Int32 = 0
    private var hasNulls = false

    public init(_ element: Element, capacity: Int = 0) {
        self.element = element
        body.reserveCapacity(capacity)
    }

    public mutating func appendNull() {
        BinaryField.appendInt32(&body, -1)
        hasNulls = true
        count += 1
    }

    public mutating func append(text: String?) {
        guard let text else { return appendNull() }
        precondition(element == .text)
        BinaryField.appendLengthPrefixed(&body, text)
        count += 1
    }

    /// Text (or, for `.jsonb`, JSON text) already as UTF-8 bytes.
    public mutating func append(utf8: [UInt8]?) {
        guard let utf8 else { return appendNull() }
        precondition(element == .text || element == .jsonb)
        if element == .jsonb {
            BinaryField.appendJSONB(&body, utf8)
        } else {
            BinaryField.appendLengthPrefixed(&body, utf8)
        }
        count += 1
    }

    public mutating func append(_ value: Int64?) {
        guard let value else { return appendNull() }
        switch element {
        case .int16:
            BinaryField.appendInt32(&body, 2)
            BinaryField.appendInt16(&body, Int16(truncatingIfNeeded: value))
        case .int32:
            BinaryField.appendInt32(&body, 4)
            BinaryField.appendInt32(&body, Int32(truncatingIfNeeded: value))
        case .int64:
            BinaryField.appendInt32(&body, 8)
            BinaryField.appendInt64(&body, value)
        default:
            preconditionFailure("BinaryArray: an integer appended to a \(element) array")
        }
        count += 1
    }

    public mutating func append(_ value: Bool?) {
        guard let value else { return appendNull() }
        precondition(element == .bool)
        BinaryField.appendInt32(&body, 1)
        body.append(value ? 1 : 0)
        count += 1
    }

    public mutating func append(_ value: Timestamp?) {
        guard let value else { return appendNull() }
        precondition(element == .timestamptz)
        BinaryField.appendInt32(&body, 8)
        BinaryField.appendInt64(&body, value.microseconds - CopyBinary.postgresEpochMicros)
        count += 1
    }

    /// The parameter: header, then the elements.
    public var parameter: SQLValue {
        var out: [UInt8] = []
        out.reserveCapacity(20 + body.count)
        BinaryField.appendInt32(&out, 1)
        BinaryField.appendInt32(&out, hasNulls ? 1 : 0)
        BinaryField.appendInt32(&out, Int32(bitPattern: element.elementOID))
        BinaryField.appendInt32(&out, count)
        BinaryField.appendInt32(&out, 1)
        out.append(contentsOf: body)
        return .binary(out, oid: element.arrayOID)
    }
}
