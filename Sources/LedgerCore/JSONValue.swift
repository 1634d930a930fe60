/// A JSON value as the ledger stores it: numbers keep their literal text (so an
/// amount sent as a JSON number stays exact) and objects keep their key order
/// (so serialising is deterministic).
public enum JSONValue: Sendable, Hashable, CustomStringConvertible {
    case null
    case bool(Bool)
    /// The number's literal text, exactly as written (already validated as JSON).
    case number(String)
    case string(String)
    case array([JSONValue])
    case object([(String, JSONValue)])

    public static func == (a: JSONValue, b: JSONValue) -> Bool {
        switch (a, b) {
        case (.null, .null): return true
        case let (.bool(x), .bool(y)): return x == y
        case let (.number(x), .number(y)): return x == y
        case let (.string(x), .string(y)): return x == y
        case let (.array(x), .array(y)): return x == y
        case let (.object(x), .object(y)):
            guard x.count == y.count else { return false }
            for i in 0..<x.count where x[i].0 != y[i].0 || x[i].1 != y[i].1 { return false }
            return true
        default: return false
        }
    }

    public func hash(into hasher: inout Hasher) {
        switch self {
        case .null: hasher.combine(0)
        case .bool(let b): hasher.combine(1); hasher.combine(b)
        case .number(let n): hasher.combine(2); hasher.combine(n)
        case .string(let s): hasher.combine(3); hasher.combine(s)
        case .array(let a): hasher.combine(4); hasher.combine(a)
        case .object(let fields):
            hasher.combine(5)
            hasher.combine(fields.count)
            for (k, v) in fields { hasher.combine(k); hasher.combine(v) }
        }
    }

    /// An integer as a JSON number.
    public static func integer<I: BinaryInteger>(_ value: I) -> JSONValue { .number(String(value)) }

    /// An object from pairs, dropping pairs whose value is nil (optional fields are omitted, not null).
    public static func object(dropNils pairs: [(String, JSONValue?)]) -> JSONValue {
        var out = [(String, JSONValue)]()
        out.reserveCapacity(pairs.count)
        for (k, v) in pairs { if let v { out.append((k, v)) } }
        return .object(out)
    }

    /// The member named `key` of an object (the first one; the parser rejects duplicates).
    public subscript(key: String) -> JSONValue? {
        guard case .object(let fields) = self else { return nil }
        return Self.member(key, in: fields)
    }

    /// The first member named `key` among an object's fields. Lengths are compared first:
    /// most keys differ in length, and that test is cheaper than `==`.
    static func member(_ key: String, in fields: [(String, JSONValue)]) -> JSONValue? {
        let length = key.utf8.count
        for (k, v) in fields where k.utf8.count == length && k == key { return v }
        return nil
    }

    public var objectFields: [(String, JSONValue)]? {
        if case .object(let f) = self { return f }
        return nil
    }

    public var arrayValue: [JSONValue]? {
        if case .array(let a) = self { return a }
        return nil
    }

    public var stringValue: String? {
        if case .string(let s) = self { return s }
        return nil
    }

    public var boolValue: Bool? {
        if case .bool(let b) = self { return b }
        return nil
    }

    public var numberLiteral: String? {
        if case .number(let n) = self { return n }
        return nil
    }

    public var isNull: Bool {
        if case .null = self { return true }
        return false
    }

    /// A plain integer from a number literal without fraction or exponent (nil otherwise).
    public var int64Value: Int64? {
        guard case .number(let n) = self else { return nil }
        return Int64(n)
    }

    /// Text for a scalar: strings as they are, number literals as written; nil for others.
    public var scalarText: String? {
        switch self {
        case .string(let s): return s
        case .number(let n): return n
        default: return nil
        }
    }

    /// Compact, deterministic JSON text (see `JSONSerializer`).
    public var description: String { JSONSerializer.string(self) }

    /// Compact, deterministic JSON as UTF-8 bytes.
    public var serializedBytes: [UInt8] { JSONSerializer.bytes(self) }

    /// Parses strict JSON from bytes (see `JSONParser`).
    public static func parse(_ bytes: [UInt8]) throws(JSONError) -> JSONValue {
        try JSONParser.parse(bytes)
    }

    public static func parse(_ text: String) throws(JSONError) -> JSONValue {
        try JSONParser.parse(Array(text.utf8))
    }

    /// Parses JSON the ledger stored itself (an event's payload, an order's state), which
    /// may nest a request's JSON deeper than a request may (`JSONParser.storedMaxDepth`).
    /// jsonb's plain text is read by `PlainJSONReader`, the rest by `JSONParser`: the
    /// same values either way.
    public static func parse(stored text: String) throws(JSONError) -> JSONValue {
        var text = text
        let parsed: Result<JSONValue, JSONError> = text.withUTF8 { utf8 in
            Result { () throws(JSONError) in try parse(stored: utf8) }
        }
        return try parsed.get()
    }

    /// `parse(stored:)` of the UTF-8 in `utf8` (a column read in place, with no string made of it).
    public static func parse(stored utf8: UnsafeBufferPointer<UInt8>) throws(JSONError) -> JSONValue {
        if let plain = PlainJSONReader.parse(utf8) { return plain }
        return try JSONParser.parse(utf8, maxDepth: JSONParser.storedMaxDepth)
    }
}
