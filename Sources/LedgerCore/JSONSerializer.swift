/// Compact, deterministic JSON output: keys in the value's order, no spaces,
/// and only escapes that PostgreSQL jsonb accepts.
public enum JSONSerializer {
    private static let hexDigits = Array("0123456789abcdef".utf8)

    public static func bytes(_ value: JSONValue) -> [UInt8] {
        var out = [UInt8]()
        out.reserveCapacity(256)
        write(value, to: &out)
        return out
    }

    public static func string(_ value: JSONValue) -> String {
        String(decoding: bytes(value), as: UTF8.self)
    }

    public static func write(_ value: JSONValue, to out: inout [UInt8]) {
        switch value {
        case .null: out.append(contentsOf: "null".utf8)
        case .bool(let b): out.append(contentsOf: (b ? "true" : "false").utf8)
        case .number(let literal):
            // Literals come from the parser or from integer constructors; anything
            // else is written as a string so the output is always valid JSON.
            if isValidNumberLiteral(literal) { out.append(contentsOf: literal.utf8) } else { writeString(literal, to: &out) }
        case .string(let s): writeString(s, to: &out)
        case .array(let items):
            out.append(UInt8(ascii: "["))
            for (n, item) in items.enumerated() {
                if n > 0 { out.append(UInt8(ascii: ",")) }
                write(item, to: &out)
            }
            out.append(UInt8(ascii: "]"))
        case .object(let fields):
            out.append(UInt8(ascii: "{"))
            for (n, (k, v)) in fields.enumerated() {
                if n > 0 { out.append(UInt8(ascii: ",")) }
                writeString(k, to: &out)
                out.append(UInt8(ascii: ":"))
                write(v, to: &out)
            }
            out.append(UInt8(ascii: "}"))
        }
    }

    /// Escapes `"`, `\` and control characters. A NUL that code (never the
    /// parser, which refuses it) put in a string becomes U+FFFD, because jsonb
    /// rejects `\u0000` and a stored payload must never fail to insert.
    public static func writeString(_ s: String, to out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        writeEscaped(s, to: &out)
        out.append(UInt8(ascii: "\""))
    }

    /// The body of `writeString`, without the quotes: for writers that build JSON text
    /// themselves (log lines, problem documents). `escapingLineSeparators` also writes
    /// U+2028 and U+2029 as escapes, for consumers that read lines as JavaScript.
    public static func writeEscaped(_ s: String, to out: inout [UInt8], escapingLineSeparators: Bool = false) {
        if isPlain(s, escapingDEL: true), !(escapingLineSeparators && mayHoldLineSeparator(s)) {
            out.append(contentsOf: s.utf8)   // the common case: nothing to escape
            return
        }
        var utf8 = s.utf8.makeIterator()
        while let c = utf8.next() {
            switch c {
            case UInt8(ascii: "\""): out.append(0x5c); out.append(0x22)
            case UInt8(ascii: "\\"): out.append(0x5c); out.append(0x5c)
            case 0x0a: out.append(0x5c); out.append(UInt8(ascii: "n"))
            case 0x0d: out.append(0x5c); out.append(UInt8(ascii: "r"))
            case 0x09: out.append(0x5c); out.append(UInt8(ascii: "t"))
            case 0x08: out.append(0x5c); out.append(UInt8(ascii: "b"))
            case 0x0c: out.append(0x5c); out.append(UInt8(ascii: "f"))
            case 0x00: out.append(contentsOf: [0xEF, 0xBF, 0xBD])
            case 0x01..<0x20, 0x7f:
                out.append(contentsOf: [0x5c, UInt8(ascii: "u"), 48, 48, hexDigits[Int(c >> 4)], hexDigits[Int(c & 0xf)]])
            case 0xE2 where escapingLineSeparators:
                // U+2028 is E2 80 A8, U+2029 is E2 80 A9.
                guard let second = utf8.next() else { out.append(c); break }
                guard second == 0x80, let third = utf8.next() else { out.append(c); out.append(second); break }
                if third == 0xA8 || third == 0xA9 {
                    out.append(contentsOf: [0x5c, UInt8(ascii: "u"), 50, 48, 50, third == 0xA8 ? 56 : 57])
                } else {
                    out.append(contentsOf: [c, second, third])
                }
            default: out.append(c)
            }
        }
    }

    /// `s` as a JSON string literal, quotes included.
    public static func quoted(_ s: String) -> String {
        var out = [UInt8]()
        out.reserveCapacity(s.utf8.count + 2)
        writeString(s, to: &out)
        return String(decoding: out, as: UTF8.self)
    }

    private static func mayHoldLineSeparator(_ s: String) -> Bool {
        s.utf8.contains(0xE2)
    }

    /// True when no byte of `s` needs escaping in a JSON string: no control
    /// character, quote or backslash (nor DEL, when `escapingDEL`).
    static func isPlain(_ s: String, escapingDEL: Bool) -> Bool {
        func plain(_ c: UInt8) -> Bool {
            c >= 0x20 && c != UInt8(ascii: "\"") && c != UInt8(ascii: "\\") && !(escapingDEL && c == 0x7f)
        }
        if let answer = s.utf8.withContiguousStorageIfAvailable({ buffer in
            for c in buffer where !plain(c) { return false }
            return true
        }) {
            return answer
        }
        return s.utf8.allSatisfy(plain)
    }

    /// A JSON number that PostgreSQL numeric can hold (`NumericRange`): what the parser accepts.
    static func isValidNumberLiteral(_ s: String) -> Bool {
        NumericRange.fits(s)
    }
}
