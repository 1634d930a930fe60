/// Minimal JSON string escaping for the few documents this layer writes itself
/// (problem details, log lines). LedgerHTTP cannot import LedgerCore's serializer.
public enum JSONText {
    /// `value` as a JSON string literal, quotes included.
    public static func quoted(_ value: String) -> String {
        var out = "\""
        out.reserveCapacity(value.utf8.count + 2)
        appendEscaped(value, to: &out)
        out += "\""
        return out
    }

    /// Appends the escaped body of a JSON string (no surrounding quotes).
    public static func appendEscaped(_ value: String, to out: inout String) {
        // Most values (routes, ids, paths) are printable ASCII with nothing to escape.
        if value.utf8.allSatisfy({ $0 >= 0x20 && $0 < 0x7F && $0 != UInt8(ascii: "\"") && $0 != UInt8(ascii: "\\") }) {
            out += value
            return
        }
        for scalar in value.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case "\u{08}": out += "\\b"
            case "\u{0C}": out += "\\f"
            // U+2028/2029 are legal JSON but break JavaScript consumers that eval lines.
            case "\u{2028}": out += "\\u2028"
            case "\u{2029}": out += "\\u2029"
            default:
                if scalar.value < 0x20 || scalar.value == 0x7F {
                    out += "\\u00"
                    out += hexDigit(scalar.value >> 4)
                    out += hexDigit(scalar.value & 0xF)
                } else {
                    out.unicodeScalars.append(scalar)
                }
            }
        }
    }

    /// `appendEscaped`, into UTF-8 bytes (the same escapes).
    public static func appendEscaped(_ value: String, to out: inout [UInt8]) {
        var plain = true
        for byte in value.utf8 where byte < 0x20 || byte >= 0x7F || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") {
            plain = false
            break
        }
        if plain {
            out.append(contentsOf: value.utf8)
            return
        }
        var escaped = ""
        appendEscaped(value, to: &escaped)
        out.append(contentsOf: escaped.utf8)
    }

    private static func hexDigit(_ v: UInt32) -> String {
        String(UnicodeScalar(UInt8(v < 10 ? 48 + v : 87 + v)))
    }
}
