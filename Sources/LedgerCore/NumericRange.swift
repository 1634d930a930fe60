/// What PostgreSQL's `numeric` (and so jsonb) can hold of a JSON number: at most
/// 131,072 digits before the decimal point and 16,383 after it, once the exponent is
/// applied (`1e300` is 301 digits, `1e-300` has 300 after the point). jsonb refuses
/// anything beyond with "value overflows numeric format".
///
/// The ledger accepts a number exactly when it fits, and reads back whatever it
/// accepted: the parser, `JSONBText.numeric` and `JSONSerializer` share this one rule,
/// and no read path has a length limit of its own (tested against the server in
/// JSONBTextTests).
public enum NumericRange {
    public static let maxIntegerDigits = 131_072
    public static let maxFractionDigits = 16_383
    /// Exponents are bounded before they are applied (a zero with `e999999999` fits
    /// numeric, but nothing a payment system sends needs it).
    public static let maxExponentMagnitude = 1_000_000

    /// The parts of a literal that decide whether it fits.
    public struct Shape: Sendable, Hashable {
        /// Digits written before the point (1 for "0.5").
        public var integerDigits: Int
        /// Digits written after the point.
        public var fractionDigits: Int
        public var exponent: Int
        /// Index, among all written digits, of the first non-zero one (nil for zero).
        public var firstNonZero: Int?
        public var negative: Bool = false

        /// Digits numeric prints after the point: jsonb keeps the written scale less the exponent.
        public var scale: Int { max(0, fractionDigits - exponent) }

        /// Digits numeric prints before the point, leading zeros dropped (0 for |x| < 1).
        public var significantIntegerDigits: Int {
            guard let firstNonZero else { return 0 }
            return max(0, integerDigits + exponent - firstNonZero)
        }

        /// The length of the text numeric prints for it (sign, digits, point).
        public var printedLength: Int {
            let sign = negative && firstNonZero != nil ? 1 : 0
            return sign + max(1, significantIntegerDigits) + (scale > 0 ? 1 + scale : 0)
        }

        public var fits: Bool {
            abs(exponent) <= NumericRange.maxExponentMagnitude
                && scale <= NumericRange.maxFractionDigits
                && significantIntegerDigits <= NumericRange.maxIntegerDigits
        }
    }

    /// The shape of a JSON number literal, or nil if the bytes are not one.
    public static func shape(_ b: UnsafeBufferPointer<UInt8>) -> Shape? {
        var i = 0
        if i < b.count && b[i] == UInt8(ascii: "-") { i += 1 }
        guard i < b.count, isDigit(b[i]) else { return nil }
        var firstNonZero: Int?
        var digitIndex = 0
        func digit(_ c: UInt8) {
            if firstNonZero == nil && c != 48 { firstNonZero = digitIndex }
            digitIndex += 1
        }
        let integerStart = i
        if b[i] == 48 {
            digit(48)
            i += 1
        } else {
            while i < b.count, isDigit(b[i]) { digit(b[i]); i += 1 }
        }
        let integerDigits = i - integerStart
        var fractionDigits = 0
        if i < b.count && b[i] == UInt8(ascii: ".") {
            i += 1
            while i < b.count, isDigit(b[i]) { digit(b[i]); fractionDigits += 1; i += 1 }
            guard fractionDigits > 0 else { return nil }
        }
        var exponent = 0
        if i < b.count && (b[i] == UInt8(ascii: "e") || b[i] == UInt8(ascii: "E")) {
            i += 1
            var negative = false
            if i < b.count && (b[i] == UInt8(ascii: "+") || b[i] == UInt8(ascii: "-")) {
                negative = b[i] == UInt8(ascii: "-")
                i += 1
            }
            let start = i
            var magnitude = 0
            while i < b.count, isDigit(b[i]) {
                // Saturate: past the bound the exact value no longer matters.
                if magnitude <= maxExponentMagnitude { magnitude = magnitude * 10 + Int(b[i] - 48) }
                i += 1
            }
            guard i > start else { return nil }
            exponent = negative ? -magnitude : magnitude
        }
        guard i == b.count else { return nil }
        return Shape(integerDigits: integerDigits, fractionDigits: fractionDigits, exponent: exponent,
                     firstNonZero: firstNonZero, negative: b[0] == UInt8(ascii: "-"))
    }

    public static func shape(_ literal: String) -> Shape? {
        var copy = literal
        return copy.withUTF8 { shape($0) }
    }

    /// True when `literal` is a JSON number that numeric can hold.
    public static func fits(_ literal: String) -> Bool { shape(literal)?.fits ?? false }

    @inline(__always) static func isDigit(_ c: UInt8) -> Bool { c >= 48 && c <= 57 }
}
