/// Typed access to the members of a JSON object, failing with a `CoreError`
/// that names the field. Shared by request parsers, adapters and event decoding.
struct FieldReader {
    let fields: [(String, JSONValue)]
    /// Longest free-text field accepted (names, hashes, ids); bounds stored sizes.
    static let maxTextLength = 1024

    init(_ value: JSONValue, what: String) throws(CoreError) {
        guard case .object(let f) = value else { throw .notAnObject(what: what) }
        fields = f
    }

    /// Parses bytes that must be a UTF-8 JSON object.
    static func parseObject(_ bytes: [UInt8], what: String) throws(CoreError) -> (JSONValue, FieldReader) {
        let value: JSONValue
        do throws(JSONError) {
            value = try JSONParser.parse(bytes)
        } catch {
            if error.kind == .invalidUTF8 { throw .notUTF8 }
            throw .invalidJSON(error)
        }
        return (value, try FieldReader(value, what: what))
    }

    func value(_ key: String) -> JSONValue? {
        for (k, v) in fields where k == key { return v.isNull ? nil : v }
        return nil
    }

    func has(_ key: String) -> Bool { value(key) != nil }

    /// A required, non-empty string.
    func string(_ key: String, maxLength: Int = maxTextLength) throws(CoreError) -> String {
        guard let s = try optionalString(key, maxLength: maxLength) else { throw .missingField(key) }
        return s
    }

    /// A string when present (null counts as absent); empty strings count as absent too.
    func optionalString(_ key: String, maxLength: Int = maxTextLength) throws(CoreError) -> String? {
        guard let v = value(key) else { return nil }
        guard case .string(let s) = v else { throw .invalidField(name: key, reason: "it must be a string") }
        return try checked(key, s, maxLength: maxLength)
    }

    /// A string or a number given as text (ids such as `order_id: 123` or `chainId: 2`).
    func optionalText(_ key: String, maxLength: Int = maxTextLength) throws(CoreError) -> String? {
        guard let v = value(key) else { return nil }
        switch v {
        case .string(let s): return try checked(key, s, maxLength: maxLength)
        case .number(let n): return n
        default: throw .invalidField(name: key, reason: "it must be a string or a number")
        }
    }

    private func checked(_ key: String, _ s: String, maxLength: Int) throws(CoreError) -> String? {
        if s.isEmpty { return nil }
        if s.utf8.count > maxLength { throw .invalidField(name: key, reason: "it is longer than \(maxLength) bytes") }
        return s
    }

    /// An amount given as a decimal string or a JSON number, validated as an
    /// exact decimal (not negative) and returned as the text given.
    func optionalAmount(_ key: String) throws(CoreError) -> String? {
        guard let v = value(key) else { return nil }
        let text: String
        switch v {
        case .string(let s): text = s
        case .number(let n): text = n
        default: throw .invalidField(name: key, reason: "an amount must be a decimal string")
        }
        let d = try ExactDecimal(parsing: text)
        if d.isNegative { throw .invalidField(name: key, reason: "an amount cannot be negative") }
        return text
    }

    func amount(_ key: String) throws(CoreError) -> String {
        guard let a = try optionalAmount(key) else { throw .missingField(key) }
        return a
    }

    /// An RFC 3339 time (strict unless `lenient`).
    func optionalTimestamp(_ key: String, lenient: Bool = false) throws(CoreError) -> Timestamp? {
        guard let s = try optionalString(key, maxLength: 64) else { return nil }
        guard let t = Timestamp.parse(s, lenient: lenient) else {
            throw .invalidField(name: key, reason: "\(CoreError.quote(s)) is not an RFC 3339 time such as 2026-11-01T12:00:00Z")
        }
        return t
    }

    func timestamp(_ key: String) throws(CoreError) -> Timestamp {
        guard let t = try optionalTimestamp(key) else { throw .missingField(key) }
        return t
    }

    func optionalInt64(_ key: String) throws(CoreError) -> Int64? {
        guard let v = value(key) else { return nil }
        guard let n = v.int64Value else { throw .invalidField(name: key, reason: "it must be an integer") }
        return n
    }

    func optionalBool(_ key: String) throws(CoreError) -> Bool? {
        guard let v = value(key) else { return nil }
        guard case .bool(let b) = v else { throw .invalidField(name: key, reason: "it must be true or false") }
        return b
    }

    /// A provider name: 1-64 characters of `a-z A-Z 0-9 . _ -`, compared lowercased.
    func provider(_ key: String = "provider") throws(CoreError) -> String {
        let p = try string(key, maxLength: 64)
        guard Self.isProviderName(p) else {
            throw .invalidField(name: key, reason: "a provider name is 1-64 characters of letters, digits, '.', '_' or '-'")
        }
        return p.lowercased()
    }

    static func isProviderName(_ p: String) -> Bool {
        guard !p.utf8.isEmpty, p.utf8.count <= 64 else { return false }
        return p.utf8.allSatisfy { c in
            (c >= 48 && c <= 57) || (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || c == 0x2e || c == 0x5f || c == 0x2d
        }
    }

    func merchantOrderNo(_ key: String) throws(CoreError) -> MerchantOrderNo {
        guard let v = value(key) else { throw .missingOrderReference }
        guard let text = v.scalarText else { throw .invalidMerchantOrderNo(JSONSerializer.string(v)) }
        return try MerchantOrderNo(text)
    }
}
