import Glibc

/// A quick reader for the JSON the ledger reads back most often: what jsonb prints of
/// the ledger's own payloads and metadata. That text is plain: ASCII strings without
/// escapes, object keys in jsonb's order (shorter first, then bytewise), integers, a
/// few levels of nesting.
///
/// For such text it builds exactly the value `JSONParser` builds. For anything else
/// (an escape, a byte outside ASCII, a fraction or exponent, keys in another order,
/// which is also how a repeated key shows, nesting deeper than `maxDepth`, text that is
/// not JSON at all) it answers nil and reads nothing further, so the caller falls back
/// to `JSONParser`, which decides, with its errors. Keys strictly in jsonb's order are
/// never repeated, so it needs no duplicate check; what it accepts, the full parser
/// accepts too (`PlainJSONReaderTests` holds the two to the same values).
public enum PlainJSONReader {
    /// Nesting it reads; deeper text goes to the full parser.
    public static let maxDepth = 8
    /// Integer literals it reads (longer ones go to the full parser, which checks them
    /// against what numeric can hold).
    static let maxIntegerLength = 64

    /// The value of `bytes`, or nil when the full parser must read them.
    public static func parse(_ bytes: UnsafeBufferPointer<UInt8>) -> JSONValue? {
        var cursor = Cursor(b: bytes)
        cursor.skipSpace()
        guard let value = cursor.value(depth: 1) else { return nil }
        cursor.skipSpace()
        return cursor.i == bytes.count ? value : nil
    }

    private struct Cursor {
        let b: UnsafeBufferPointer<UInt8>
        var i = 0

        mutating func skipSpace() {
            while i < b.count {
                switch b[i] {
                case 0x20, 0x09, 0x0a, 0x0d: i += 1
                default: return
                }
            }
        }

        mutating func value(depth: Int) -> JSONValue? {
            guard i < b.count else { return nil }
            switch b[i] {
            case UInt8(ascii: "{"): return depth <= PlainJSONReader.maxDepth ? object(depth: depth) : nil
            case UInt8(ascii: "["): return depth <= PlainJSONReader.maxDepth ? array(depth: depth) : nil
            case UInt8(ascii: "\""): return stringBounds().map { .string(text($0)) }
            case UInt8(ascii: "t"): return literal("true") ? .bool(true) : nil
            case UInt8(ascii: "f"): return literal("false") ? .bool(false) : nil
            case UInt8(ascii: "n"): return literal("null") ? .null : nil
            case UInt8(ascii: "-"), 48...57: return integer().map { .number(text($0)) }
            default: return nil
            }
        }

        mutating func object(depth: Int) -> JSONValue? {
            i += 1
            skipSpace()
            var fields = [(String, JSONValue)]()
            if i < b.count && b[i] == UInt8(ascii: "}") { i += 1; return .object(fields) }
            fields.reserveCapacity(16)
            var previousKey: Range<Int>? = nil
            while true {
                skipSpace()
                guard i < b.count, b[i] == UInt8(ascii: "\""), let key = stringBounds() else { return nil }
                if let previousKey, !inJSONBOrder(previousKey, key) { return nil }
                previousKey = key
                skipSpace()
                guard i < b.count, b[i] == UInt8(ascii: ":") else { return nil }
                i += 1
                skipSpace()
                guard let member = value(depth: depth + 1) else { return nil }
                fields.append((text(key), member))
                skipSpace()
                guard i < b.count else { return nil }
                if b[i] == UInt8(ascii: ",") { i += 1; continue }
                if b[i] == UInt8(ascii: "}") { i += 1; return .object(fields) }
                return nil
            }
        }

        mutating func array(depth: Int) -> JSONValue? {
            i += 1
            skipSpace()
            var items = [JSONValue]()
            if i < b.count && b[i] == UInt8(ascii: "]") { i += 1; return .array(items) }
            while true {
                skipSpace()
                guard let item = value(depth: depth + 1) else { return nil }
                items.append(item)
                skipSpace()
                guard i < b.count else { return nil }
                if b[i] == UInt8(ascii: ",") { i += 1; continue }
                if b[i] == UInt8(ascii: "]") { i += 1; return .array(items) }
                return nil
            }
        }

        /// The bytes between the quotes of a string with nothing to decode: printable ASCII,
        /// no escape. Nil for any other string.
        mutating func stringBounds() -> Range<Int>? {
            i += 1
            let start = i
            while i < b.count {
                let c = b[i]
                if c == UInt8(ascii: "\"") {
                    i += 1
                    return start..<(i - 1)
                }
                if c == UInt8(ascii: "\\") || c < 0x20 || c >= 0x80 { return nil }
                i += 1
            }
            return nil
        }

        /// An integer literal's bytes: `-`, then `0` or a digit 1-9 and more digits; nil for
        /// a fraction or an exponent.
        mutating func integer() -> Range<Int>? {
            let start = i
            if b[i] == UInt8(ascii: "-") { i += 1 }
            guard i < b.count else { return nil }
            if b[i] == 48 {
                i += 1
            } else if b[i] >= 49 && b[i] <= 57 {
                while i < b.count && b[i] >= 48 && b[i] <= 57 { i += 1 }
            } else {
                return nil
            }
            if i < b.count && (b[i] == UInt8(ascii: ".") || b[i] == UInt8(ascii: "e") || b[i] == UInt8(ascii: "E")) {
                return nil
            }
            return i - start <= PlainJSONReader.maxIntegerLength ? start..<i : nil
        }

        mutating func literal(_ word: StaticString) -> Bool {
            let n = word.utf8CodeUnitCount
            guard i + n <= b.count, memcmp(b.baseAddress! + i, word.utf8Start, n) == 0 else { return false }
            i += n
            return true
        }

        /// jsonb's key order: shorter first, then bytewise; strictly, so no key repeats.
        func inJSONBOrder(_ a: Range<Int>, _ c: Range<Int>) -> Bool {
            if a.count != c.count { return a.count < c.count }
            return a.isEmpty ? false : memcmp(b.baseAddress! + a.lowerBound, b.baseAddress! + c.lowerBound, a.count) < 0
        }

        func text(_ r: Range<Int>) -> String {
            String(decoding: UnsafeBufferPointer(rebasing: b[r]), as: UTF8.self)
        }
    }
}
