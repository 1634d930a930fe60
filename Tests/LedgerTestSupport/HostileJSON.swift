import Foundation

/// A seeded generator of valid JSON text written to break whatever reads it back:
/// numbers at and past PostgreSQL numeric's edges (huge and tiny exponents, 10,000-digit
/// integers, 16,383 fraction digits, `-0`), nesting to the limit, every Unicode plane raw
/// and escaped, surrogate pairs, control escapes, markup and SQL in strings, long strings.
///
/// With `refusable`, it also writes what jsonb cannot hold or the ledger's API refuses
/// (`\u0000`, lone surrogates, nesting past the limit, numbers beyond numeric, repeated
/// keys), so a property can check each is refused cleanly, or kept where it must be.
public struct HostileJSON {
    public struct Seeded: RandomNumberGenerator {
        var state: UInt64
        public init(seed: UInt64) { state = seed }
        public mutating func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
    }

    public var rng: Seeded
    /// Whether to write what the ledger refuses at its API (see the type's comment).
    public var refusable: Bool

    public init(seed: UInt64, refusable: Bool = false) {
        rng = Seeded(seed: seed)
        self.refusable = refusable
    }

    mutating func chance(_ percent: Int) -> Bool { Int.random(in: 0..<100, using: &rng) < percent }
    mutating func pick<T>(_ items: [T]) -> T { items[Int.random(in: 0..<items.count, using: &rng)] }

    // MARK: values

    /// A JSON value whose nesting is at most `depth` levels (a scalar is level 0).
    public mutating func value(depth: Int) -> String {
        if depth > 0 && chance(4) { return nested(levels: refusable && chance(10) ? depth + 1 : depth) }
        switch Int.random(in: 0..<10, using: &rng) {
        case 0, 1, 2: return string()
        case 3, 4: return number()
        case 5: return pick(["true", "false", "null"])
        case 6, 7: return depth > 0 ? object(depth: depth) : string()
        default: return depth > 0 ? array(depth: depth) : number()
        }
    }

    /// An object holding up to a few members, each at most `depth - 1` deep.
    public mutating func object(depth: Int, extraMembers: Int = 0) -> String {
        var keys: [String] = []
        for _ in 0..<(Int.random(in: 0...4, using: &rng) + extraMembers) {
            if refusable && !keys.isEmpty && chance(2) { keys.append(pick(keys)); continue }
            let fresh = key()
            // Keys drawn alike repeat by chance; a repeat only when asked for (above).
            if !keys.contains(fresh) { keys.append(fresh) }
        }
        return "{" + keys.map { "\($0):\(value(depth: depth - 1))" }.joined(separator: ",") + "}"
    }

    /// `count` members `"prefixN": value` for an object the caller opens and closes
    /// beside fields of its own; their keys never repeat the caller's.
    public mutating func members(_ count: Int, depth: Int, prefix: String = "extra") -> [String] {
        (0..<count).map { "\"\(prefix)\($0)\":\(value(depth: depth - 1))" }
    }

    public mutating func array(depth: Int) -> String {
        "[" + (0..<Int.random(in: 0...4, using: &rng)).map { _ in value(depth: depth - 1) }.joined(separator: ",") + "]"
    }

    /// Arrays and objects nested exactly `levels` deep.
    public mutating func nested(levels: Int) -> String {
        var open = "", close = ""
        for _ in 0..<levels {
            if chance(50) { open += "["; close = "]" + close } else { open += "{\(key()):"; close = "}" + close }
        }
        return open + (chance(50) ? number() : string()) + close
    }

    // MARK: numbers

    public mutating func number() -> String {
        // The heavy literals (thousands of digits) are rare.
        let roll = Int.random(in: 0..<100, using: &rng)
        switch roll {
        case 0..<30: return String(Int.random(in: -1_000_000...1_000_000, using: &rng))
        case 30..<50: return "\(Int.random(in: 0...99_999, using: &rng)).\(Int.random(in: 0...9_999, using: &rng))"
        case 50..<62: return pick(["-0", "-0.0", "0e0", "-0e-3", "0.000", "0E+7", "1E+2", "1.50e1", "-7.0e1", "12e-1"])
        case 62..<77: return pick(["1e300", "-1e300", "1e-300", "-2.5e-300", "9.99e999", "1e1001", "1e-1001"])
        case 77..<85: return "\(digits(20)).\(digits(40))e-\(Int.random(in: 0...9, using: &rng))"
        case 85..<89: return "\(pick(["", "-"]))1e\(Int.random(in: 0...3_000, using: &rng))"
        case 89..<93: return "1e-\(Int.random(in: 0...3_000, using: &rng))"
        case 93: return chance(30) ? digits(10_000) : digits(Int.random(in: 65...600, using: &rng))
        case 94, 95:
            // The widest numeric holds, rarely: 16,383 digits after the point, or 131,072 before it.
            guard chance(15) else { return "0." + String(repeating: "0", count: Int.random(in: 0...400, using: &rng)) + "1" }
            return chance(80) ? "0." + String(repeating: "0", count: 16_382) + "1" : pick(["1e131071", "1e-16383"])
        default:
            guard refusable, chance(40) else { return String(Int.random(in: Int.min...Int.max, using: &rng)) }
            return pick(["1e131072", "-1e131072", "1e-16384", "1e999999999", "10e131071", "0e-20000",
                         "1" + String(repeating: "0", count: 131_072)])
        }
    }

    mutating func digits(_ count: Int) -> String {
        var out = String(Int.random(in: 1...9, using: &rng))
        out.reserveCapacity(count)
        for _ in 1..<count { out.append(Character(Unicode.Scalar(UInt8(48 + Int.random(in: 0...9, using: &rng))))) }
        return out
    }

    // MARK: strings

    /// A key: short, sometimes empty, from the same alphabet as strings.
    public mutating func key() -> String {
        chance(60) ? "\"" + pick(["a", "status", "merchantOrderNo", "email", "n", "x-y", "k\(Int.random(in: 0...99, using: &rng))"]) + "\""
                   : string(maxScalars: 12)
    }

    /// A JSON string literal (quotes included).
    public mutating func string(maxScalars: Int? = nil) -> String {
        let count: Int
        if let maxScalars { count = Int.random(in: 0...maxScalars, using: &rng) }
        else if Int.random(in: 0..<1_000, using: &rng) < 3 { count = Int.random(in: 5_000...40_000, using: &rng) }   // long strings, rarely
        else { count = Int.random(in: 0...24, using: &rng) }
        var out = "\""
        out.reserveCapacity(count * 2 + 2)
        if maxScalars == nil && chance(5) { out += pick(["<script>alert(1)</script>", "'; DROP TABLE ledger.events; --",
                                                           "=HYPERLINK(\\\"x\\\")", "someone@example.com", "${jndi:x}"]) }
        for _ in 0..<count { out += piece() }
        return out + "\""
    }

    /// One character of a string, raw or escaped.
    mutating func piece() -> String {
        switch Int.random(in: 0..<100, using: &rng) {
        case 0..<40:
            return String(Unicode.Scalar(UInt8(Int.random(in: 0x20...0x7e, using: &rng))))
                .replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"")
        case 40..<50: return pick(["\\\"", "\\\\", "\\/", "\\b", "\\f", "\\n", "\\r", "\\t", "\u{7f}"])
        case 50..<55: return String(format: "\\u%04x", Int.random(in: 1...0x1f, using: &rng))
        case 55..<75:
            // Every plane: BMP, SMP, SIP, TIP, SSP, and the private-use planes 15-16.
            let scalar = plane()
            return chance(50) ? String(Character(scalar)) : escaped(scalar)
        case 75..<80: return pick(["\u{FEFF}", "\u{200B}", "\u{202E}", "\u{FFFD}", "\u{FFFE}", "\u{FFFF}", "e\u{301}", "\u{10FFFF}"])
        case 80 where refusable && chance(15): return pick(["\\u0000", "\\ud800", "\\udc00", "\\uDBFF\\u0041", "\\udfff\\ud800"])
        default: return String(Character(plane()))
        }
    }

    mutating func plane() -> Unicode.Scalar {
        let ranges: [ClosedRange<UInt32>] = [
            0x80...0x7FF, 0x800...0xD7FF, 0xE000...0xFFFD, 0x1_0000...0x1_FFFF, 0x2_0000...0x2_FFFF,
            0x3_0000...0x3_FFFF, 0xE_0000...0xE_FFFF, 0xF_0000...0x10_FFFF,
        ]
        let range = pick(ranges)
        return Unicode.Scalar(UInt32.random(in: range, using: &rng))!
    }

    func escaped(_ scalar: Unicode.Scalar) -> String {
        if scalar.value < 0x1_0000 { return String(format: "\\u%04X", scalar.value) }
        let v = scalar.value - 0x1_0000
        return String(format: "\\u%04x\\u%04X", 0xD800 + (v >> 10), 0xDC00 + (v & 0x3FF))
    }
}
