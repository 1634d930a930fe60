/// An exact decimal number: a sign, a coefficient of decimal digits of any
/// length, and a scale (digits after the point). Money never touches floating point.
///
/// The scale given is kept for display ("40.00" prints as "40.00"), while
/// equality, hashing and ordering are by value ("40.0" == "40.00").
public struct ExactDecimal: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// Longest amount text accepted from outside: bounds work and storage per amount.
    public static let maxTextLength = 64

    /// Coefficient digits (0...9), most significant first, no leading zeros; empty means zero.
    public private(set) var digits: [UInt8]
    /// Number of the coefficient's digits that lie after the decimal point.
    public private(set) var scale: Int
    /// Never true for zero, so that "-0" equals "0".
    public private(set) var isNegative: Bool

    public static let zero = ExactDecimal(digits: [], scale: 0, isNegative: false)

    init(digits: [UInt8], scale: Int, isNegative: Bool) {
        var d = digits
        var lead = 0
        while lead < d.count && d[lead] == 0 { lead += 1 }
        if lead > 0 { d.removeFirst(lead) }
        self.digits = d
        self.scale = scale
        self.isNegative = isNegative && !d.isEmpty
    }

    public init(_ value: Int64) {
        let magnitude = value.magnitude
        self.init(digits: Array(String(magnitude).utf8).map { $0 - 48 }, scale: 0, isNegative: value < 0)
    }

    /// Parses a plain decimal: optional `-` or `+`, digits, optionally `.` and
    /// digits ("40", "0.015", "-3.50"; not ".5" or "5."). Exponent forms are rejected on
    /// purpose: providers send amounts as plain decimal strings, and "1e400"
    /// would turn a short string into a huge number.
    public init(parsing text: String) throws(CoreError) {
        var copy = text
        self = try copy.withUTF8 { Self.parse($0, text: text) }.get()
    }

    /// A number in exponent form ("1.2e-5", "-4E+2") written out as a plain decimal
    /// ("0.000012", "-400"), exactly; nil when `text` has no exponent. Refused when the
    /// written-out form would be longer than `maxTextLength` ("1e400"), or when the text
    /// around the exponent is not a plain decimal.
    public static func writtenOut(_ text: String) throws(CoreError) -> String? {
        let bytes = Array(text.utf8)
        guard let e = bytes.firstIndex(where: { $0 == UInt8(ascii: "e") || $0 == UInt8(ascii: "E") }) else { return nil }
        if bytes.count > maxTextLength { throw .amountTooLong(length: bytes.count, limit: maxTextLength) }
        let mantissa = try ExactDecimal(parsing: String(decoding: bytes[..<e], as: UTF8.self))
        var exponentText = bytes[(e + 1)...]
        var exponentNegative = false
        if let sign = exponentText.first, sign == UInt8(ascii: "+") || sign == UInt8(ascii: "-") {
            exponentNegative = sign == UInt8(ascii: "-")
            exponentText = exponentText.dropFirst()
        }
        guard !exponentText.isEmpty, exponentText.count <= 4, exponentText.allSatisfy({ $0 >= 48 && $0 <= 57 }) else {
            throw .invalidAmount(text)
        }
        let magnitude = exponentText.reduce(0) { $0 * 10 + Int($1 - 48) }
        let scale = mantissa.scale - (exponentNegative ? -magnitude : magnitude)
        if mantissa.isZero { return "0" }
        // The written-out length ("-", the digits, zeros, a point), refused before it is made.
        let count = mantissa.digits.count
        let length = (mantissa.isNegative ? 1 : 0) + (scale <= 0 ? count - scale : (scale >= count ? 2 + scale : count + 1))
        if length > maxTextLength { throw .amountTooLong(length: length, limit: maxTextLength) }
        var digits = mantissa.digits
        if scale < 0 { digits += [UInt8](repeating: 0, count: -scale) }
        return ExactDecimal(digits: digits, scale: max(scale, 0), isNegative: mantissa.isNegative).description
    }

    /// Nil instead of an error, for places where a bad amount is simply "no amount".
    public init?(_ text: String) {
        guard let value = try? ExactDecimal(parsing: text) else { return nil }
        self = value
    }

    private static func parse(_ b: UnsafeBufferPointer<UInt8>, text: @autoclosure () -> String) -> Result<ExactDecimal, CoreError> {
        if b.count > maxTextLength { return .failure(.amountTooLong(length: b.count, limit: maxTextLength)) }
        var i = 0
        var negative = false
        if i < b.count && (b[i] == UInt8(ascii: "-") || b[i] == UInt8(ascii: "+")) {
            negative = b[i] == UInt8(ascii: "-")
            i += 1
        }
        var digits = [UInt8]()
        digits.reserveCapacity(b.count)
        var intDigits = 0
        while i < b.count, b[i] >= 48, b[i] <= 57 { digits.append(b[i] - 48); intDigits += 1; i += 1 }
        var fracDigits = 0
        var sawPoint = false
        if i < b.count && b[i] == UInt8(ascii: ".") {
            sawPoint = true
            i += 1
            while i < b.count, b[i] >= 48, b[i] <= 57 { digits.append(b[i] - 48); fracDigits += 1; i += 1 }
        }
        guard i == b.count, intDigits > 0, !sawPoint || fracDigits > 0 else { return .failure(.invalidAmount(text())) }
        return .success(ExactDecimal(digits: digits, scale: fracDigits, isNegative: negative))
    }

    public var isZero: Bool { digits.isEmpty }

    /// The same value with trailing fractional zeros removed (the canonical form).
    public var normalized: ExactDecimal {
        var d = digits
        var s = scale
        while s > 0, let last = d.last, last == 0 { d.removeLast(); s -= 1 }
        if d.isEmpty { s = 0 }
        return ExactDecimal(digits: d, scale: s, isNegative: isNegative)
    }

    /// Digits of the value at a larger scale (appends zeros).
    private func coefficient(atScale target: Int) -> [UInt8] {
        if target == scale { return digits }
        return digits + [UInt8](repeating: 0, count: target - scale)
    }

    /// Text with exactly `scale` fractional digits, e.g. "40.00", "-0.5", "0".
    public var description: String {
        var out = [UInt8]()
        out.reserveCapacity(digits.count + 3)
        if isNegative { out.append(UInt8(ascii: "-")) }
        let intCount = digits.count - scale
        if intCount <= 0 {
            out.append(48)
        } else {
            for d in digits[0..<intCount] { out.append(d + 48) }
        }
        if scale > 0 {
            out.append(UInt8(ascii: "."))
            if intCount < 0 { out.append(contentsOf: repeatElement(48, count: -intCount)) }
            for d in digits[max(0, intCount)...] { out.append(d + 48) }
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// The canonical text: no trailing fractional zeros ("40.00" → "40").
    public var canonical: String { normalized.description }

    public static func == (a: ExactDecimal, b: ExactDecimal) -> Bool {
        let x = a.normalized, y = b.normalized
        return x.isNegative == y.isNegative && x.scale == y.scale && x.digits == y.digits
    }

    public func hash(into hasher: inout Hasher) {
        let n = normalized
        hasher.combine(n.isNegative)
        hasher.combine(n.scale)
        hasher.combine(n.digits)
    }

    public static func < (a: ExactDecimal, b: ExactDecimal) -> Bool {
        if a.isNegative != b.isNegative { return a.isNegative }
        let c = compareMagnitude(a, b)
        return a.isNegative ? c > 0 : c < 0
    }

    /// -1, 0, 1 comparing absolute values.
    static func compareMagnitude(_ a: ExactDecimal, _ b: ExactDecimal) -> Int {
        let s = max(a.scale, b.scale)
        let x = a.coefficient(atScale: s), y = b.coefficient(atScale: s)
        return compareDigits(x, y)
    }

    private static func compareDigits(_ x: [UInt8], _ y: [UInt8]) -> Int {
        // Both have no leading zeros, so the longer one is larger.
        if x.count != y.count { return x.count < y.count ? -1 : 1 }
        for i in 0..<x.count where x[i] != y[i] { return x[i] < y[i] ? -1 : 1 }
        return 0
    }

    /// Exact sum; the result's scale is the larger of the two ("40.00" + "1.5" = "41.50").
    public static func + (a: ExactDecimal, b: ExactDecimal) -> ExactDecimal {
        let s = max(a.scale, b.scale)
        let x = a.coefficient(atScale: s), y = b.coefficient(atScale: s)
        if a.isNegative == b.isNegative {
            return ExactDecimal(digits: addDigits(x, y), scale: s, isNegative: a.isNegative)
        }
        let c = compareDigits(x, y)
        if c == 0 { return ExactDecimal(digits: [], scale: s, isNegative: false) }
        return c > 0
            ? ExactDecimal(digits: subtractDigits(x, y), scale: s, isNegative: a.isNegative)
            : ExactDecimal(digits: subtractDigits(y, x), scale: s, isNegative: b.isNegative)
    }

    public static prefix func - (a: ExactDecimal) -> ExactDecimal {
        ExactDecimal(digits: a.digits, scale: a.scale, isNegative: !a.isNegative)
    }

    public static func - (a: ExactDecimal, b: ExactDecimal) -> ExactDecimal { a + (-b) }

    public static func += (a: inout ExactDecimal, b: ExactDecimal) { a = a + b }

    private static func addDigits(_ x: [UInt8], _ y: [UInt8]) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: max(x.count, y.count) + 1)
        var i = x.count - 1, j = y.count - 1, k = out.count - 1
        var carry: UInt8 = 0
        while k >= 0 {
            var sum = carry
            if i >= 0 { sum += x[i]; i -= 1 }
            if j >= 0 { sum += y[j]; j -= 1 }
            out[k] = sum % 10
            carry = sum / 10
            k -= 1
        }
        return out
    }

    /// x - y where x >= y in magnitude.
    private static func subtractDigits(_ x: [UInt8], _ y: [UInt8]) -> [UInt8] {
        var out = x
        var borrow: Int = 0
        var j = y.count - 1
        var i = x.count - 1
        while i >= 0 {
            var d = Int(x[i]) - borrow - (j >= 0 ? Int(y[j]) : 0)
            if d < 0 { d += 10; borrow = 1 } else { borrow = 0 }
            out[i] = UInt8(d)
            i -= 1
            j -= 1
        }
        return out
    }
}
