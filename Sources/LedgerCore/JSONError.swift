/// Why some bytes are not acceptable JSON, and where the parser noticed it.
public struct JSONError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The kind of problem, for tests and for choosing a message.
    public enum Kind: Hashable, Sendable {
        case empty
        case unexpectedEnd
        case unexpectedByte(UInt8)
        case invalidUTF8
        case controlCharacterInString
        case invalidEscape
        case loneSurrogate
        /// `\u0000`: PostgreSQL jsonb cannot store it, so the ledger refuses it at the door.
        case nulCharacter
        case invalidNumber
        /// A number whose exponent PostgreSQL numeric could not hold.
        case numberOutOfRange
        /// The document's numbers would grow by more than `limit` bytes as jsonb stores them.
        case numbersExpandTooMuch(limit: Int)
        case tooDeep(limit: Int)
        case duplicateKey(String)
        case trailingData
    }

    public var kind: Kind
    /// Byte offset into the input.
    public var offset: Int
    /// Where in the document it happened, as `payload.items[2].n` (`JSONPath`); empty
    /// for the top level, nil when not located.
    public var path: String?

    public init(_ kind: Kind, at offset: Int, path: String? = nil) {
        self.kind = kind
        self.offset = offset
        self.path = path
    }

    public var message: String {
        let what: String
        switch kind {
        case .empty: what = "the input is empty"
        case .unexpectedEnd: what = "the input ends in the middle of a value"
        case .unexpectedByte(let b):
            what = (b >= 0x21 && b < 0x7f) ? "unexpected character '\(Character(Unicode.Scalar(b)))'" : "unexpected byte 0x\(String(b, radix: 16))"
        case .invalidUTF8: what = "the bytes are not valid UTF-8"
        case .controlCharacterInString: what = "a string holds a raw control character (it must be escaped)"
        case .invalidEscape: what = "a string holds an invalid escape sequence"
        case .loneSurrogate: what = "a \\u escape is half of a surrogate pair"
        case .nulCharacter: what = "a string holds \\u0000, which the ledger cannot store"
        case .invalidNumber: what = "a number is not written as JSON allows"
        case .numberOutOfRange:
            what = "a number is beyond what PostgreSQL numeric holds (\(NumericRange.maxIntegerDigits) digits before the point, \(NumericRange.maxFractionDigits) after)"
        case .numbersExpandTooMuch(let limit):
            what = "the numbers would take more than \(limit) bytes beyond their text as PostgreSQL stores them (write such a value as a string)"
        case .tooDeep(let limit): what = "values are nested more than \(limit) levels deep"
        case .duplicateKey(let key): what = "an object repeats the key \(CoreError.quote(key))"
        case .trailingData: what = "there is more data after the JSON value"
        }
        if let path, !path.isEmpty { return "\(what) in \(path) (at byte \(offset))" }
        return "\(what) (at byte \(offset))"
    }

    public var description: String { message }
}
