/// A strict RFC 8259 parser over raw bytes.
///
/// Stricter than most on purpose, because what it accepts is stored in
/// PostgreSQL jsonb and read by auditors: it refuses invalid UTF-8, lone
/// surrogates, `\u0000` (jsonb cannot hold it), duplicate object keys (two
/// readers could pick different values), numbers PostgreSQL numeric cannot
/// hold (`NumericRange`), nesting deeper than `maxDepth`, and anything after
/// the value. Whatever it accepts, jsonb holds and the parser reads back.
public enum JSONParser {
    /// Nesting accepted from requests.
    public static let maxDepth = 64
    /// Nesting accepted when reading back what the ledger stored itself (event payloads,
    /// order states): they embed a request's JSON a few levels deeper than it arrived,
    /// so what was accepted at the door must always read back.
    public static let storedMaxDepth = 2 * maxDepth
    /// How much longer than written a document's numbers may become once printed as
    /// numeric prints them (`1e300` grows by 296 bytes): 1 MiB, the default body limit.
    public static let maxNumberExpansion = 1 << 20

    public static func parse(_ bytes: [UInt8], maxDepth limit: Int = maxDepth) throws(JSONError) -> JSONValue {
        let parsed: Result<JSONValue, JSONError> = bytes.withUnsafeBufferPointer { buf in
            Result { () throws(JSONError) in try parse(buf, maxDepth: limit) }
        }
        return try parsed.get()
    }

    /// Parses the bytes where they lie (a string's UTF-8, a row's column), without a copy.
    public static func parse(_ buf: UnsafeBufferPointer<UInt8>, maxDepth limit: Int = maxDepth) throws(JSONError) -> JSONValue {
        var reader = Reader(buf, limit: limit, lenient: false)
        do throws(JSONError) {
            return try reader.document()
        } catch {
            var located = error
            located.path = JSONPath.locate(offset: error.offset, in: buf).description
            throw located
        }
    }

    /// Parses a provider's signed body, which the ledger must record even where jsonb
    /// cannot hold a part of it (providers.md: keep what the provider sent). Strict
    /// where the bytes are not JSON at all (bytes that are not UTF-8 among them); for the
    /// rest, what jsonb cannot hold is changed and each change listed (`JSONAlteration`):
    /// `\u0000` and a lone surrogate become U+FFFD, a value nested deeper than `maxDepth`
    /// or a number numeric cannot hold becomes null, and of a repeated key the last
    /// value is kept (as jsonb keeps it). The caller decides whether a changed field
    /// matters. Costs nothing extra for a body the strict parse accepts.
    public static func parseLenient(_ bytes: [UInt8], maxDepth limit: Int = maxDepth) throws(JSONError) -> (JSONValue, [JSONAlteration]) {
        do throws(JSONError) {
            return (try parse(bytes, maxDepth: limit), [])
        } catch {
            switch error.kind {
            case .nulCharacter, .loneSurrogate, .tooDeep, .duplicateKey, .numberOutOfRange, .numbersExpandTooMuch: break
            default: throw error
            }
        }
        let result: Result<(JSONValue, [JSONAlteration]), JSONError> = bytes.withUnsafeBufferPointer { buf in
            var reader = Reader(buf, limit: limit, lenient: true)
            do throws(JSONError) {
                let value = try reader.document()
                return .success((value, reader.alterations))
            } catch {
                var located = error
                located.path = JSONPath.locate(offset: error.offset, in: buf).description
                return .failure(located)
            }
        }
        return try result.get()
    }

    private struct Reader {
        let b: UnsafeBufferPointer<UInt8>
        var i = 0
        var depth = 0
        let limit: Int
        /// How many bytes the document's numbers have grown by so far, printed as numeric does.
        var expansion = 0
        /// Lenient mode (`parseLenient`): what jsonb cannot hold is changed and noted.
        let lenient: Bool
        var alterations: [JSONAlteration] = []
        /// The path being read, kept in lenient mode only.
        var path: [JSONPath.Component] = []

        init(_ b: UnsafeBufferPointer<UInt8>, limit: Int, lenient: Bool) {
            self.b = b
            self.limit = limit
            self.lenient = lenient
        }

        mutating func note(_ kind: JSONAlteration.Kind) {
            let here = JSONPath(path)
            if alterations.last?.path == here && alterations.last?.kind == kind { return }
            alterations.append(JSONAlteration(kind: kind, path: here))
        }

        mutating func document() throws(JSONError) -> JSONValue {
            skipSpace()
            guard i < b.count else { throw JSONError(b.isEmpty ? .empty : .unexpectedEnd, at: i) }
            let v = try value()
            skipSpace()
            guard i == b.count else { throw JSONError(.trailingData, at: i) }
            return v
        }

        mutating func skipSpace() {
            while i < b.count {
                switch b[i] {
                case 0x20, 0x09, 0x0a, 0x0d: i += 1
                default: return
                }
            }
        }

        mutating func value() throws(JSONError) -> JSONValue {
            guard i < b.count else { throw JSONError(.unexpectedEnd, at: i) }
            switch b[i] {
            case UInt8(ascii: "{"), UInt8(ascii: "["):
                if lenient && depth + 1 > limit {
                    try skipContainer()
                    note(.tooDeep(limit: limit))
                    return .null
                }
                return b[i] == UInt8(ascii: "{") ? try object() : try array()
            case UInt8(ascii: "\""): return .string(try string())
            case UInt8(ascii: "t"): try literal("true"); return .bool(true)
            case UInt8(ascii: "f"): try literal("false"); return .bool(false)
            case UInt8(ascii: "n"): try literal("null"); return .null
            case UInt8(ascii: "-"), 48...57:
                if lenient {
                    do throws(JSONError) {
                        return .number(try number())
                    } catch where error.kind == .numberOutOfRange {
                        note(.numberOutOfRange)
                        return .null
                    } catch where error.kind == .numbersExpandTooMuch(limit: JSONParser.maxNumberExpansion) {
                        note(.numbersExpandTooMuch(limit: JSONParser.maxNumberExpansion))
                        return .null
                    }
                }
                return .number(try number())
            default:
                if b[i] >= 0x80 { throw JSONError(validUTF8Length(at: i) == nil ? .invalidUTF8 : .unexpectedByte(b[i]), at: i) }
                throw JSONError(.unexpectedByte(b[i]), at: i)
            }
        }

        mutating func literal(_ word: StaticString) throws(JSONError) {
            let n = word.utf8CodeUnitCount
            let p = word.utf8Start
            for k in 0..<n {
                guard i + k < b.count else { throw JSONError(.unexpectedEnd, at: b.count) }
                guard b[i + k] == p[k] else { throw JSONError(.unexpectedByte(b[i + k]), at: i + k) }
            }
            i += n
        }

        mutating func enter() throws(JSONError) {
            depth += 1
            if depth > limit { throw JSONError(.tooDeep(limit: limit), at: i) }
        }

        mutating func array() throws(JSONError) -> JSONValue {
            try enter()
            i += 1
            var items = [JSONValue]()
            skipSpace()
            if i < b.count && b[i] == UInt8(ascii: "]") { i += 1; depth -= 1; return .array(items) }
            while true {
                skipSpace()
                if lenient { path.append(.index(items.count)) }
                items.append(try value())
                if lenient { path.removeLast() }
                skipSpace()
                guard i < b.count else { throw JSONError(.unexpectedEnd, at: i) }
                if b[i] == UInt8(ascii: ",") { i += 1; continue }
                if b[i] == UInt8(ascii: "]") { i += 1; break }
                throw JSONError(.unexpectedByte(b[i]), at: i)
            }
            depth -= 1
            return .array(items)
        }

        mutating func object() throws(JSONError) -> JSONValue {
            try enter()
            i += 1
            var fields = [(String, JSONValue)]()
            var seen: Set<String>? = nil
            skipSpace()
            if i < b.count && b[i] == UInt8(ascii: "}") { i += 1; depth -= 1; return .object(fields) }
            fields.reserveCapacity(16)   // provider bodies hold about a dozen fields: no regrowth
            while true {
                skipSpace()
                guard i < b.count else { throw JSONError(.unexpectedEnd, at: i) }
                guard b[i] == UInt8(ascii: "\"") else { throw JSONError(.unexpectedByte(b[i]), at: i) }
                let keyOffset = i
                if lenient { path.append(.key("")) }
                let key = try string()
                if lenient { path[path.count - 1] = .key(key) }
                // Linear scan while small (typical bodies), a set once objects grow.
                var repeated = false
                if fields.count < 16 {
                    // Lengths first: most keys differ in length, and that test is cheaper than `==`.
                    let length = key.utf8.count
                    for (k, _) in fields where k.utf8.count == length && k == key { repeated = true; break }
                } else {
                    if seen == nil { seen = Set(fields.map { $0.0 }) }
                    if !seen!.insert(key).inserted { repeated = true }
                }
                if repeated && !lenient { throw JSONError(.duplicateKey(key), at: keyOffset) }
                skipSpace()
                guard i < b.count else { throw JSONError(.unexpectedEnd, at: i) }
                guard b[i] == UInt8(ascii: ":") else { throw JSONError(.unexpectedByte(b[i]), at: i) }
                i += 1
                skipSpace()
                let member = try value()
                if repeated {
                    // As jsonb does: the last value of a repeated key is the one kept.
                    note(.repeatedKey)
                    fields.removeAll { $0.0 == key }
                }
                if lenient { path.removeLast() }
                fields.append((key, member))
                skipSpace()
                guard i < b.count else { throw JSONError(.unexpectedEnd, at: i) }
                if b[i] == UInt8(ascii: ",") { i += 1; continue }
                if b[i] == UInt8(ascii: "}") { i += 1; break }
                throw JSONError(.unexpectedByte(b[i]), at: i)
            }
            depth -= 1
            return .object(fields)
        }

        mutating func number() throws(JSONError) -> String {
            let start = i
            if b[i] == UInt8(ascii: "-") { i += 1 }
            guard i < b.count else { throw JSONError(.unexpectedEnd, at: i) }
            if b[i] == 48 {
                i += 1
            } else if b[i] >= 49 && b[i] <= 57 {
                while i < b.count && b[i] >= 48 && b[i] <= 57 { i += 1 }
            } else {
                throw JSONError(.invalidNumber, at: i)
            }
            var plain = true   // no fraction, no exponent: an integer literal
            if i < b.count && b[i] == UInt8(ascii: ".") {
                plain = false
                i += 1
                let fracStart = i
                while i < b.count && b[i] >= 48 && b[i] <= 57 { i += 1 }
                guard i > fracStart else { throw JSONError(i < b.count ? .invalidNumber : .unexpectedEnd, at: i) }
            }
            if i < b.count && (b[i] == UInt8(ascii: "e") || b[i] == UInt8(ascii: "E")) {
                plain = false
                i += 1
                if i < b.count && (b[i] == UInt8(ascii: "+") || b[i] == UInt8(ascii: "-")) { i += 1 }
                let expStart = i
                while i < b.count && b[i] >= 48 && b[i] <= 57 { i += 1 }
                guard i > expStart else { throw JSONError(i < b.count ? .invalidNumber : .unexpectedEnd, at: i) }
            }
            let literal = UnsafeBufferPointer(rebasing: b[start..<i])
            // Short integers always fit numeric; anything else is measured as numeric would hold it.
            if !(plain && literal.count <= 64) {
                guard let shape = NumericRange.shape(literal), shape.fits else { throw JSONError(.numberOutOfRange, at: start) }
                // jsonb stores a number as numeric prints it: `1e131071` is 8 bytes here and
                // 128 KiB there. The growth a document's numbers may add is bounded, so a body
                // of such numbers cannot make gigabytes of storage and memory.
                let grown = expansion + max(0, shape.printedLength - literal.count)
                if grown > JSONParser.maxNumberExpansion {
                    throw JSONError(.numbersExpandTooMuch(limit: JSONParser.maxNumberExpansion), at: start)
                }
                expansion = grown
            }
            return String(decoding: literal, as: UTF8.self)
        }

        /// Skips a container nested too deep to keep (lenient mode), checking only that its
        /// brackets balance and its strings end: its content is not kept.
        mutating func skipContainer() throws(JSONError) {
            var closers: [UInt8] = []
            while i < b.count {
                let c = b[i]
                switch c {
                case UInt8(ascii: "{"): closers.append(UInt8(ascii: "}"))
                case UInt8(ascii: "["): closers.append(UInt8(ascii: "]"))
                case UInt8(ascii: "}"), UInt8(ascii: "]"):
                    guard closers.last == c else { throw JSONError(.unexpectedByte(c), at: i) }
                    closers.removeLast()
                    if closers.isEmpty { i += 1; return }
                case UInt8(ascii: "\""):
                    i += 1
                    while i < b.count && b[i] != UInt8(ascii: "\"") { i += b[i] == UInt8(ascii: "\\") ? 2 : 1 }
                    guard i < b.count else { throw JSONError(.unexpectedEnd, at: b.count) }
                default: break
                }
                i += 1
            }
            throw JSONError(.unexpectedEnd, at: b.count)
        }

        /// Length of the valid UTF-8 sequence starting at `at` (a byte >= 0x80), or nil.
        func validUTF8Length(at p: Int) -> Int? {
            let c0 = b[p]
            func cont(_ k: Int) -> UInt8? {
                guard p + k < b.count, b[p + k] & 0xC0 == 0x80 else { return nil }
                return b[p + k]
            }
            switch c0 {
            case 0xC2...0xDF:
                return cont(1) == nil ? nil : 2
            case 0xE0...0xEF:
                guard let c1 = cont(1), cont(2) != nil else { return nil }
                if c0 == 0xE0 && c1 < 0xA0 { return nil }   // overlong
                if c0 == 0xED && c1 > 0x9F { return nil }   // UTF-16 surrogates
                return 3
            case 0xF0...0xF4:
                guard let c1 = cont(1), cont(2) != nil, cont(3) != nil else { return nil }
                if c0 == 0xF0 && c1 < 0x90 { return nil }   // overlong
                if c0 == 0xF4 && c1 > 0x8F { return nil }   // above U+10FFFF
                return 4
            default:
                return nil
            }
        }

        mutating func string() throws(JSONError) -> String {
            i += 1
            let start = i
            // Fast path: no escapes, so the bytes are the string.
            while i < b.count {
                let c = b[i]
                if c == UInt8(ascii: "\"") {
                    let s = String(decoding: UnsafeBufferPointer(rebasing: b[start..<i]), as: UTF8.self)
                    i += 1
                    return s
                }
                if c == UInt8(ascii: "\\") { return try escapedString(from: start) }
                if c < 0x20 { throw JSONError(.controlCharacterInString, at: i) }
                if c < 0x80 { i += 1; continue }
                guard let n = validUTF8Length(at: i) else { throw JSONError(.invalidUTF8, at: i) }
                i += n
            }
            throw JSONError(.unexpectedEnd, at: i)
        }

        mutating func escapedString(from start: Int) throws(JSONError) -> String {
            var out = [UInt8]()
            out.reserveCapacity(i - start + 16)
            out.append(contentsOf: UnsafeBufferPointer(rebasing: b[start..<i]))
            while i < b.count {
                let c = b[i]
                if c == UInt8(ascii: "\"") {
                    i += 1
                    return String(decoding: out, as: UTF8.self)
                }
                if c == UInt8(ascii: "\\") {
                    guard i + 1 < b.count else { throw JSONError(.unexpectedEnd, at: b.count) }
                    let e = b[i + 1]
                    i += 2
                    switch e {
                    case UInt8(ascii: "\""): out.append(0x22)
                    case UInt8(ascii: "\\"): out.append(0x5c)
                    case UInt8(ascii: "/"): out.append(0x2f)
                    case UInt8(ascii: "b"): out.append(0x08)
                    case UInt8(ascii: "f"): out.append(0x0c)
                    case UInt8(ascii: "n"): out.append(0x0a)
                    case UInt8(ascii: "r"): out.append(0x0d)
                    case UInt8(ascii: "t"): out.append(0x09)
                    case UInt8(ascii: "u"):
                        let escapeAt = i - 2
                        var scalar = try hex4()
                        if scalar == 0 {
                            guard lenient else { throw JSONError(.nulCharacter, at: escapeAt) }
                            note(.nulCharacter)
                            scalar = 0xFFFD
                        } else if scalar >= 0xD800 && scalar <= 0xDBFF {
                            // A high surrogate needs a low one next; in lenient mode a lone one is
                            // U+FFFD and whatever follows is read on its own.
                            let afterHigh = i
                            var low: UInt32 = 0
                            if i + 1 < b.count, b[i] == UInt8(ascii: "\\"), b[i + 1] == UInt8(ascii: "u") {
                                i += 2
                                low = try hex4()
                            }
                            if low >= 0xDC00 && low <= 0xDFFF {
                                scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                            } else {
                                guard lenient else { throw JSONError(.loneSurrogate, at: escapeAt) }
                                i = afterHigh
                                note(.loneSurrogate)
                                scalar = 0xFFFD
                            }
                        } else if scalar >= 0xDC00 && scalar <= 0xDFFF {
                            guard lenient else { throw JSONError(.loneSurrogate, at: escapeAt) }
                            note(.loneSurrogate)
                            scalar = 0xFFFD
                        }
                        appendUTF8(scalar, to: &out)
                    default:
                        throw JSONError(.invalidEscape, at: i - 2)
                    }
                    continue
                }
                if c < 0x20 { throw JSONError(.controlCharacterInString, at: i) }
                if c < 0x80 { out.append(c); i += 1; continue }
                guard let n = validUTF8Length(at: i) else { throw JSONError(.invalidUTF8, at: i) }
                out.append(contentsOf: UnsafeBufferPointer(rebasing: b[i..<(i + n)]))
                i += n
            }
            throw JSONError(.unexpectedEnd, at: i)
        }

        mutating func hex4() throws(JSONError) -> UInt32 {
            guard i + 4 <= b.count else { throw JSONError(.unexpectedEnd, at: b.count) }
            var v: UInt32 = 0
            for k in 0..<4 {
                let c = b[i + k]
                let d: UInt32
                switch c {
                case 48...57: d = UInt32(c - 48)
                case 65...70: d = UInt32(c - 55)
                case 97...102: d = UInt32(c - 87)
                default: throw JSONError(.invalidEscape, at: i + k)
                }
                v = v << 4 | d
            }
            i += 4
            return v
        }

        func appendUTF8(_ s: UInt32, to out: inout [UInt8]) {
            switch s {
            case 0..<0x80:
                out.append(UInt8(s))
            case 0x80..<0x800:
                out.append(UInt8(0xC0 | (s >> 6)))
                out.append(UInt8(0x80 | (s & 0x3F)))
            case 0x800..<0x10000:
                out.append(UInt8(0xE0 | (s >> 12)))
                out.append(UInt8(0x80 | ((s >> 6) & 0x3F)))
                out.append(UInt8(0x80 | (s & 0x3F)))
            default:
                out.append(UInt8(0xF0 | (s >> 18)))
                out.append(UInt8(0x80 | ((s >> 12) & 0x3F)))
                out.append(UInt8(0x80 | ((s >> 6) & 0x3F)))
                out.append(UInt8(0x80 | (s & 0x3F)))
            }
        }
    }
}
