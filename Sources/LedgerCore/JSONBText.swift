/// The text PostgreSQL prints for a jsonb value (`payload::text`): object keys
/// ordered shorter first, then bytewise; `", "` and `": "` separators;
/// numbers as `numeric` prints them; only `"`, `\` and control characters
/// escaped. The ledger hashes events over this text (ledger.event_content),
/// so computing it here lets the writer build the hash chain itself and send
/// PostgreSQL exactly the text it will print back. Tested against the server
/// (JSONBTextTests); `ledger verify` recomputes every hash from what
/// PostgreSQL prints, so a difference could never pass unnoticed.
public enum JSONBText {
    /// The text, or nil for a value jsonb would refuse (a number beyond numeric's range).
    public static func string(_ value: JSONValue) -> String? {
        bytes(value).map { String(decoding: $0, as: UTF8.self) }
    }

    public static func bytes(_ value: JSONValue) -> [UInt8]? {
        var out = [UInt8]()
        out.reserveCapacity(512)
        return write(value, to: &out) ? out : nil
    }

    /// Appends the text of `value`; false (with `out` half-written) for a value
    /// jsonb would refuse.
    static func write(_ value: JSONValue, to out: inout [UInt8]) -> Bool {
        switch value {
        case .null: out.append(contentsOf: "null".utf8)
        case .bool(let b): out.append(contentsOf: (b ? "true" : "false").utf8)
        case .number(let literal):
            guard let n = numeric(literal) else { return false }
            out.append(contentsOf: n.utf8)
        case .string(let s): writeString(s, to: &out)
        case .array(let items):
            out.append(UInt8(ascii: "["))
            for (n, item) in items.enumerated() {
                if n > 0 { out.append(contentsOf: [UInt8(ascii: ","), UInt8(ascii: " ")]) }
                guard write(item, to: &out) else { return false }
            }
            out.append(UInt8(ascii: "]"))
        case .object(let fields):
            // jsonb orders keys by (length, bytes) and keeps the last of duplicate keys.
            var sorted = Array(fields.indices)
            let inOrder = fields.count < 2
                || (1..<fields.count).allSatisfy { keyOrder(fields[$0 - 1].0, fields[$0].0) < 0 }
            if !inOrder {
                sorted.sort { i, j in
                    let order = keyOrder(fields[i].0, fields[j].0)
                    return order != 0 ? order < 0 : i < j
                }
            }
            out.append(UInt8(ascii: "{"))
            var first = true
            for (n, i) in sorted.enumerated() {
                if n + 1 < sorted.count, keyOrder(fields[sorted[n + 1]].0, fields[i].0) == 0 { continue }  // the later one wins
                if !first { out.append(contentsOf: [UInt8(ascii: ","), UInt8(ascii: " ")]) }
                first = false
                writeString(fields[i].0, to: &out)
                out.append(contentsOf: [UInt8(ascii: ":"), UInt8(ascii: " ")])
                guard write(fields[i].1, to: &out) else { return false }
            }
            out.append(UInt8(ascii: "}"))
        }
        return true
    }

    /// `value` as jsonb holds it: object keys in jsonb's order (the last of a repeated
    /// key kept) and numbers as numeric prints them, at every depth (a number numeric
    /// would refuse stays as written). An event's payload comes back from the store in
    /// this form, so state built from a payload as received must use it too: a live
    /// fold and a replay then hold equal facts.
    public static func normalized(_ value: JSONValue) -> JSONValue {
        switch value {
        case .null, .bool, .string:
            return value
        case .number(let literal):
            return numeric(literal).map(JSONValue.number) ?? value
        case .array(let items):
            return .array(items.map(normalized))
        case .object(let fields):
            var sorted = Array(fields.indices)
            sorted.sort { i, j in
                let order = keyOrder(fields[i].0, fields[j].0)
                return order != 0 ? order < 0 : i < j
            }
            var out: [(String, JSONValue)] = []
            out.reserveCapacity(fields.count)
            for (n, i) in sorted.enumerated() {
                if n + 1 < sorted.count, keyOrder(fields[sorted[n + 1]].0, fields[i].0) == 0 { continue }  // the later one wins
                out.append((fields[i].0, normalized(fields[i].1)))
            }
            return .object(out)
        }
    }

    /// jsonb's key order, as -1, 0 or 1: the shorter key first, then bytewise.
    /// Compares the UTF-8 in place (this runs for every key of every payload).
    static func keyOrder(_ a: String, _ b: String) -> Int {
        let (countA, countB) = (a.utf8.count, b.utf8.count)
        if countA != countB { return countA < countB ? -1 : 1 }
        let inPlace = a.utf8.withContiguousStorageIfAvailable { bytesA in
            b.utf8.withContiguousStorageIfAvailable { bytesB -> Int in
                for i in 0..<countA where bytesA[i] != bytesB[i] { return bytesA[i] < bytesB[i] ? -1 : 1 }
                return 0
            }
        }
        if let inPlace, let order = inPlace { return order }
        if a.utf8.elementsEqual(b.utf8) { return 0 }
        return a.utf8.lexicographicallyPrecedes(b.utf8) ? -1 : 1
    }

    /// PostgreSQL's escape_json: `\"`, `\\`, `\b \f \n \r \t`, other bytes
    /// below 0x20 as `\u00xx`; everything else as is. (A NUL, which jsonb
    /// cannot hold, is written as U+FFFD exactly as JSONSerializer does.)
    static func writeString(_ s: String, to out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        if JSONSerializer.isPlain(s, escapingDEL: false) {
            out.append(contentsOf: s.utf8)   // the common case: nothing to escape
            out.append(UInt8(ascii: "\""))
            return
        }
        let hex = Array("0123456789abcdef".utf8)
        for c in s.utf8 {
            switch c {
            case UInt8(ascii: "\""): out.append(contentsOf: [0x5c, 0x22])
            case UInt8(ascii: "\\"): out.append(contentsOf: [0x5c, 0x5c])
            case 0x08: out.append(contentsOf: [0x5c, UInt8(ascii: "b")])
            case 0x0c: out.append(contentsOf: [0x5c, UInt8(ascii: "f")])
            case 0x0a: out.append(contentsOf: [0x5c, UInt8(ascii: "n")])
            case 0x0d: out.append(contentsOf: [0x5c, UInt8(ascii: "r")])
            case 0x09: out.append(contentsOf: [0x5c, UInt8(ascii: "t")])
            case 0x00: out.append(contentsOf: [0xEF, 0xBF, 0xBD])
            case 0x01..<0x20: out.append(contentsOf: [0x5c, UInt8(ascii: "u"), 48, 48, hex[Int(c >> 4)], hex[Int(c & 0xf)]])
            default: out.append(c)
            }
        }
        out.append(UInt8(ascii: "\""))
    }

    /// A JSON number literal as PostgreSQL's numeric prints it: the exponent
    /// applied, display scale = fraction digits minus exponent (at least 0),
    /// leading zeros dropped, no negative zero. Nil if it is not a JSON number,
    /// or if numeric would refuse it (`NumericRange`). Linear in the printed length.
    public static func numeric(_ literal: String) -> String? {
        var copy = literal
        return copy.withUTF8 { numeric($0) }
    }

    static func numeric(_ b: UnsafeBufferPointer<UInt8>) -> String? {
        guard let shape = NumericRange.shape(b), shape.fits else { return nil }
        let negative = b.first == UInt8(ascii: "-")
        let hasExponent = shape.integerDigits + shape.fractionDigits + (shape.fractionDigits > 0 ? 1 : 0) + (negative ? 1 : 0) != b.count
        // Without an exponent a JSON number prints as written (the grammar allows no
        // leading zeros, and numeric keeps the fraction's digits), but for negative zero.
        if !hasExponent && (!negative || shape.firstNonZero != nil) {
            return String(decoding: b, as: UTF8.self)
        }
        // The written digits, integer part then fraction, without the point.
        var digits = [UInt8]()
        digits.reserveCapacity(shape.integerDigits + shape.fractionDigits)
        let start = negative ? 1 : 0
        for k in start..<(start + shape.integerDigits) { digits.append(b[k]) }
        let fractionStart = start + shape.integerDigits + 1
        if shape.fractionDigits > 0 { for k in fractionStart..<(fractionStart + shape.fractionDigits) { digits.append(b[k]) } }

        let point = shape.integerDigits + shape.exponent   // digits before the decimal point
        let scale = shape.scale
        var out = [UInt8]()
        out.reserveCapacity(max(point, 1) + scale + 2)
        if negative && shape.firstNonZero != nil { out.append(UInt8(ascii: "-")) }
        // The whole part: the digits before `point` (zero-padded past the written ones),
        // leading zeros dropped, "0" when nothing is left.
        let wholeStart = out.count
        if point > 0 {
            for k in 0..<point {
                let d = k < digits.count ? digits[k] : 48
                if out.count == wholeStart && d == 48 { continue }
                out.append(d)
            }
        }
        if out.count == wholeStart { out.append(48) }
        // The fraction: `scale` digits from `point` on (zeros before the written digits, and after them).
        if scale > 0 {
            out.append(UInt8(ascii: "."))
            for k in point..<(point + scale) {
                out.append(k >= 0 && k < digits.count ? digits[k] : 48)
            }
        }
        return String(decoding: out, as: UTF8.self)
    }
}
