extension JSONBText {
    /// Whether `text` is already exactly what jsonb prints for it (so it can be
    /// hashed and stored as is, without parsing it into a value and rendering it
    /// again). One pass, no allocation. Conservative: false for anything it
    /// does not recognise as canonical (keys with escapes, numbers with an
    /// exponent, whitespace), which then takes the parse-and-render route.
    public static func isCanonical(_ text: String) -> Bool {
        var copy = text
        return copy.withUTF8 { bytes in
            var checker = CanonicalChecker(bytes: bytes)
            return checker.value(depth: 0) && checker.index == bytes.count
        }
    }
}

/// Recognises jsonb's output form: `{"k": v, ...}` with keys ordered by (length,
/// bytes) and none repeated, `[a, b]`, strings escaped exactly as escape_json
/// does, numbers as numeric prints them.
private struct CanonicalChecker {
    let bytes: UnsafeBufferPointer<UInt8>
    var index = 0

    init(bytes: UnsafeBufferPointer<UInt8>) { self.bytes = bytes }

    private var current: UInt8? { index < bytes.count ? bytes[index] : nil }

    private mutating func expect(_ byte: UInt8) -> Bool {
        guard current == byte else { return false }
        index += 1
        return true
    }

    mutating func value(depth: Int) -> Bool {
        guard depth < 100, let c = current else { return false }
        switch c {
        case UInt8(ascii: "{"): return object(depth: depth)
        case UInt8(ascii: "["): return array(depth: depth)
        case UInt8(ascii: "\""): return string(plainOnly: false) != nil
        case UInt8(ascii: "t"): return word("true")
        case UInt8(ascii: "f"): return word("false")
        case UInt8(ascii: "n"): return word("null")
        default: return number()
        }
    }

    private mutating func word(_ w: StaticString) -> Bool {
        let count = w.utf8CodeUnitCount
        guard index + count <= bytes.count else { return false }
        for k in 0..<count where bytes[index + k] != w.utf8Start[k] { return false }
        index += count
        return true
    }

    /// `, ` between items, or the closing bracket.
    private mutating func separator(close: UInt8) -> Bool? {
        if expect(close) { return false }
        guard expect(UInt8(ascii: ",")), expect(UInt8(ascii: " ")) else { return nil }
        return true
    }

    private mutating func array(depth: Int) -> Bool {
        index += 1
        if expect(UInt8(ascii: "]")) { return true }
        while true {
            guard value(depth: depth + 1) else { return false }
            guard let more = separator(close: UInt8(ascii: "]")) else { return false }
            if !more { return true }
        }
    }

    private mutating func object(depth: Int) -> Bool {
        index += 1
        if expect(UInt8(ascii: "}")) { return true }
        var previous: Range<Int>?
        while true {
            // Keys must be plain (no escapes) so their bytes are their decoded bytes.
            guard let key = string(plainOnly: true) else { return false }
            if let previous, !Self.ordered(bytes, previous, key) { return false }
            previous = key
            guard expect(UInt8(ascii: ":")), expect(UInt8(ascii: " ")), value(depth: depth + 1) else { return false }
            guard let more = separator(close: UInt8(ascii: "}")) else { return false }
            if !more { return true }
        }
    }

    /// jsonb's key order, strictly: shorter first, then bytewise; equal keys are not canonical.
    private static func ordered(_ b: UnsafeBufferPointer<UInt8>, _ x: Range<Int>, _ y: Range<Int>) -> Bool {
        if x.count != y.count { return x.count < y.count }
        for k in 0..<x.count where b[x.lowerBound + k] != b[y.lowerBound + k] {
            return b[x.lowerBound + k] < b[y.lowerBound + k]
        }
        return false
    }

    /// A string as escape_json writes it; the range of its content. The text is
    /// a Swift String, so its bytes are valid UTF-8.
    private mutating func string(plainOnly: Bool) -> Range<Int>? {
        guard expect(UInt8(ascii: "\"")) else { return nil }
        let start = index
        while let c = current {
            switch c {
            case UInt8(ascii: "\""):
                index += 1
                return start..<(index - 1)
            case 0x00..<0x20:
                return nil
            case UInt8(ascii: "\\"):
                guard !plainOnly, index + 1 < bytes.count else { return nil }
                let e = bytes[index + 1]
                switch e {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "b"), UInt8(ascii: "f"),
                     UInt8(ascii: "n"), UInt8(ascii: "r"), UInt8(ascii: "t"):
                    index += 2
                case UInt8(ascii: "u"):
                    // Only control characters without a short form, as \u00xx in lowercase.
                    guard index + 5 < bytes.count, bytes[index + 2] == 48, bytes[index + 3] == 48,
                          let high = Self.lowerHex(bytes[index + 4]), let low = Self.lowerHex(bytes[index + 5]) else { return nil }
                    let scalar = high << 4 | low
                    guard scalar >= 0x01, scalar < 0x20, ![0x08, 0x09, 0x0a, 0x0c, 0x0d].contains(scalar) else { return nil }
                    index += 6
                default:
                    return nil
                }
            default:
                index += 1
            }
        }
        return nil
    }

    private static func lowerHex(_ c: UInt8) -> UInt8? {
        switch c {
        case 48...57: c - 48
        case 97...102: c - 87
        default: nil
        }
    }

    /// `-?(0|[1-9][0-9]*)(\.[0-9]+)?`, not a negative zero: numeric prints exactly that back.
    private mutating func number() -> Bool {
        let negative = expect(UInt8(ascii: "-"))
        var nonZero = false
        guard let first = current, (48...57).contains(first) else { return false }
        index += 1
        if first == 48 {
            if let c = current, (48...57).contains(c) { return false }
        } else {
            nonZero = true
            while let c = current, (48...57).contains(c) { index += 1 }
        }
        if expect(UInt8(ascii: ".")) {
            guard let c = current, (48...57).contains(c) else { return false }
            while let c = current, (48...57).contains(c) {
                if c != 48 { nonZero = true }
                index += 1
            }
        }
        if let c = current, c == UInt8(ascii: "e") || c == UInt8(ascii: "E") { return false }
        return !negative || nonZero
    }
}
