/// A running exact sum of decimal amounts given as text, and how many were added: an
/// export's total per asset. The same value and scale as adding each amount as an
/// `ExactDecimal` (the largest scale of any amount added), without making one per
/// amount: amounts of up to 36 digits are added as a 128-bit coefficient, and only
/// what would overflow it goes through `ExactDecimal`.
public struct ExactSum: Sendable {
    /// Rows counted, with an amount or without.
    public private(set) var rows: Int64 = 0
    /// The sum of the amounts added so far as integers, at `scale`.
    private var coefficient: Int128 = 0
    /// The largest scale of any amount added.
    private var scale = 0
    /// The amounts `coefficient` could not hold, exactly.
    private var rest = ExactDecimal.zero

    public init() {}

    /// The exact sum of every amount added.
    public var amount: ExactDecimal { rest + ExactDecimal(coefficient: coefficient, scale: scale) }

    /// Counts a row and adds its amount; an amount that is not a plain decimal adds nothing.
    public mutating func add(_ amount: String?) {
        rows += 1
        guard var text = amount else { return }
        let fast = text.withUTF8 { Self.plainDecimal($0) }
        if let (value, valueScale) = fast, addFast(value, scale: valueScale) { return }
        if let exact = ExactDecimal(text) { rest += exact }
    }

    /// Adds `value` × 10^-`valueScale` to the coefficient, or returns false (changing
    /// nothing but moving the coefficient into `rest`) when that would overflow.
    private mutating func addFast(_ value: Int128, scale valueScale: Int) -> Bool {
        if valueScale > scale {
            guard let widened = Self.times(coefficient, tenTo: valueScale - scale) else { return spill() }
            coefficient = widened
            scale = valueScale
        }
        guard let aligned = Self.times(value, tenTo: scale - valueScale) else { return spill() }
        let (sum, overflow) = coefficient.addingReportingOverflow(aligned)
        guard !overflow else { return spill() }
        coefficient = sum
        return true
    }

    /// Moves the coefficient into `rest`; false, so the amount at hand is added there too.
    private mutating func spill() -> Bool {
        rest += ExactDecimal(coefficient: coefficient, scale: scale)
        coefficient = 0
        return false
    }

    private static func times(_ value: Int128, tenTo power: Int) -> Int128? {
        var result = value
        for _ in 0..<power {
            let (next, overflow) = result.multipliedReportingOverflow(by: 10)
            if overflow { return nil }
            result = next
        }
        return result
    }

    /// The coefficient and scale of a plain decimal (`-3.50` is -350 and 2) of at most
    /// 36 digits, or nil for anything else (left to `ExactDecimal` to read or refuse).
    private static func plainDecimal(_ b: UnsafeBufferPointer<UInt8>) -> (Int128, Int)? {
        guard b.count <= 36 else { return nil }
        var i = 0, negative = false
        if i < b.count && (b[i] == UInt8(ascii: "-") || b[i] == UInt8(ascii: "+")) {
            negative = b[i] == UInt8(ascii: "-")
            i += 1
        }
        var value: Int128 = 0, intDigits = 0, fracDigits = 0
        while i < b.count, b[i] >= 48, b[i] <= 57 { value = value * 10 + Int128(b[i] - 48); intDigits += 1; i += 1 }
        if i < b.count && b[i] == UInt8(ascii: ".") {
            i += 1
            while i < b.count, b[i] >= 48, b[i] <= 57 { value = value * 10 + Int128(b[i] - 48); fracDigits += 1; i += 1 }
            guard fracDigits > 0 else { return nil }
        }
        guard i == b.count, intDigits > 0 else { return nil }
        return (negative ? -value : value, fracDigits)
    }
}

extension ExactDecimal {
    /// `coefficient` × 10^-`scale`.
    init(coefficient: Int128, scale: Int) {
        let digits = Array(String(coefficient.magnitude).utf8).map { $0 - 48 }
        self.init(digits: digits, scale: scale, isNegative: coefficient < 0)
    }
}
