/// Typed access to the members of a JSON object, failing with a `CoreError`
/// that names the field. Shared by request parsers, adapters and event decoding.
struct FieldReader {
    let fields: [(String, JSONValue)]
    /// Whose format the object is in: it decides how text fields are read.
    let dialect: Dialect
    /// Longest free-text field accepted (names, hashes, ids); bounds stored sizes.
    static let maxTextLength = 1024

    /// How text fields are read.
    enum Dialect {
        /// A provider's body or response (webhooks, query results, SDK data): ids may come
        /// as JSON numbers (`order_id: 123`, `chainId: 2`), amounts too, and an empty
        /// string means the field is absent (Banxa sends `"transaction_hash": ""`).
        case provider
        /// A request to the ledger's own API (http-api.md): every field it gives as text
        /// is a JSON string, never a number (`1000` and `1000.0` would be one number
        /// written two ways, and a client that sent a number may already have rounded it
        /// through a float), and an empty string is refused rather than read as absent.
        case request
    }

    init(_ value: JSONValue, what: String, dialect: Dialect = .provider) throws(CoreError) {
        guard case .object(let f) = value else { throw .notAnObject(what: what) }
        fields = f
        self.dialect = dialect
    }

    /// Parses a request body to the ledger's own API: a UTF-8 JSON object read in the `request` dialect.
    static func parseRequest(_ bytes: [UInt8], what: String) throws(CoreError) -> (JSONValue, FieldReader) {
        let (value, _) = try parseObject(bytes, what: what)
        return (value, try FieldReader(value, what: what, dialect: .request))
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

    /// A string when present (null counts as absent). An empty string counts as absent
    /// from a provider and is refused in a request.
    func optionalString(_ key: String, maxLength: Int = maxTextLength) throws(CoreError) -> String? {
        guard let v = value(key) else { return nil }
        guard case .string(let s) = v else { throw .invalidField(name: key, reason: notAString(v)) }
        return try checked(key, s, maxLength: maxLength)
    }

    /// A string, or from a provider also a number given as text (ids such as
    /// `order_id: 123` or `chainId: 2`); in a request, a string only.
    func optionalText(_ key: String, maxLength: Int = maxTextLength) throws(CoreError) -> String? {
        guard let v = value(key) else { return nil }
        switch (v, dialect) {
        case (.string(let s), _): return try checked(key, s, maxLength: maxLength)
        case (.number(let n), .provider): return n
        case (_, .request): throw .invalidField(name: key, reason: notAString(v))
        default: throw .invalidField(name: key, reason: "it must be a string or a number")
        }
    }

    private func checked(_ key: String, _ s: String, maxLength: Int) throws(CoreError) -> String? {
        if s.isEmpty {
            guard dialect == .provider else { throw .invalidField(name: key, reason: Self.emptyReason) }
            return nil
        }
        if s.utf8.count > maxLength { throw .invalidField(name: key, reason: "it is longer than \(maxLength) bytes") }
        return s
    }

    /// Why a request's empty string is refused (a client that means "none" leaves the field out).
    static let emptyReason = "it is an empty string (an optional field without a value is left out, or null)"

    /// The reason a non-string is refused, naming what came instead.
    private func notAString(_ v: JSONValue) -> String {
        guard dialect == .request else { return "it must be a string" }
        if case .number(let n) = v { return "it must be a JSON string such as \"\(n.prefix(40))\", not a number" }
        return "it must be a JSON string"
    }

    /// An amount, validated as an exact decimal (not negative) and returned as the text
    /// given: from a provider a decimal string or a JSON number, in a request (where
    /// http-api.md says amounts are decimal strings) a decimal string only. From a provider
    /// an empty string is no amount, and an exponent form ("1.2e-5", as some encoders print
    /// small numbers) is returned written out ("0.000012"), exactly.
    func optionalAmount(_ key: String) throws(CoreError) -> String? {
        guard let v = value(key) else { return nil }
        var text: String
        switch (v, dialect) {
        case (.string(let s), _): text = s
        case (.number(let n), .provider): text = n
        case (.number(let n), .request):
            throw .invalidField(name: key, reason: "an amount is a decimal string such as \"\(n.prefix(40))\", not a JSON number")
        default: throw .invalidField(name: key, reason: "an amount must be a decimal string")
        }
        let d: ExactDecimal
        switch dialect {
        case .provider:
            if text.isEmpty { return nil }
            if let plain = try ExactDecimal.writtenOut(text) { text = plain }
            d = try ExactDecimal(parsing: text)
        case .request:
            // Named for the field: a request may carry two amounts (amount, fiatAmount).
            if text.isEmpty { throw .invalidField(name: key, reason: Self.emptyReason) }
            do throws(CoreError) { d = try ExactDecimal(parsing: text) } catch {
                switch error {
                case .amountTooLong(let length, let limit):
                    throw .invalidField(name: key, reason: "it is too long (\(length) characters, at most \(limit))")
                default:
                    throw .invalidField(name: key, reason: "\(CoreError.quote(text)) is not a plain decimal number such as 40 or 0.015")
                }
            }
        }
        if d.isNegative { throw .invalidField(name: key, reason: "an amount cannot be negative") }
        return text
    }

    /// A provider's field an observation can do without: what `read` reads, or nil when the
    /// field cannot be read, noted in `unread` as the event's metadata lists what its parsed
    /// form lacks (`leftOut`: `{path, reason}`); the raw body keeps the field as it came.
    func unlessUnreadable<T>(_ key: String, _ unread: inout [JSONValue], _ read: () throws(CoreError) -> T?) -> T? {
        do throws(CoreError) {
            return try read()
        } catch {
            Self.note(key, error, in: &unread)
            return nil
        }
    }

    /// Adds `key`, left out for `error`, to `unread` (`{path, reason}`, as `leftOut` lists it).
    private static func note(_ key: String, _ error: CoreError, in unread: inout [JSONValue]) {
        unread.append(.object([("path", .string(JSONPath([.key(key)]).description)),
                               ("reason", .string(error.message + ": left out of the mapped fields"))]))
    }

    /// A provider's amount: as `optionalAmount` reads it; when it is no plain non-negative
    /// decimal, the text as the provider wrote it, if it is a string or number of at most
    /// `ExactDecimal.maxTextLength` characters without control characters, so that rule 6
    /// flags it (an amount the ledger cannot compare is a mismatch a person looks at); nil
    /// when absent, and when it is none of those (then noted in `unread`).
    func providerAmount(_ key: String, _ unread: inout [JSONValue]) -> String? {
        do throws(CoreError) {
            return try optionalAmount(key)
        } catch {
            let text: String?
            switch value(key) {
            case .string(let s)?: text = s
            case .number(let n)?: text = n
            default: text = nil
            }
            if let text, !text.isEmpty, text.utf8.count <= ExactDecimal.maxTextLength,
               !text.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }) {
                return text
            }
            Self.note(key, error, in: &unread)
            return nil
        }
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

    /// The order a body names. A provider may write it as a number (web3's webhooks); a
    /// request names it as a JSON string, else `1000` and `1000.0` would be two orders.
    /// A provider's `.` or `..` is taken as sent (`MerchantOrderNo(stored:)`): it names an
    /// order the merchant created with the provider (perhaps registered before dot segments
    /// were refused), and refusing a verified delivery would lose the evidence of a payment.
    func merchantOrderNo(_ key: String) throws(CoreError) -> MerchantOrderNo {
        guard let v = value(key) else { throw .missingOrderReference }
        switch dialect {
        case .provider:
            guard let text = v.scalarText else { throw .invalidMerchantOrderNo(JSONSerializer.string(v)) }
            return try MerchantOrderNo(stored: text)
        case .request:
            guard case .string(let text) = v else {
                throw .invalidField(name: key, reason: "an order number is a JSON string"
                                    + (v.scalarText.map { " such as \"\($0.prefix(64))\", never a number" } ?? ""))
            }
            return try MerchantOrderNo(text)
        }
    }
}
