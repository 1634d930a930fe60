/// Integers written as decimal digits straight into a byte buffer: documents, stored
/// states, exports and times write several for every order and event, and going
/// through `String(value)` cost ten times the digits themselves.
enum DecimalDigits {
    /// `String(value)`'s bytes.
    static func append(_ value: Int64, to out: inout [UInt8]) {
        if value < 0 {
            out.append(UInt8(ascii: "-"))
            append(magnitude: value.magnitude, to: &out)
        } else {
            append(magnitude: UInt64(value), to: &out)
        }
    }

    static func append(magnitude value: UInt64, to out: inout [UInt8]) {
        // At most 20 digits; written from the end of a small buffer, then copied once.
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 20) { buffer in
            var rest = value
            var start = 20
            repeat {
                start -= 1
                buffer[start] = UInt8(truncatingIfNeeded: 48 &+ rest % 10)
                rest /= 10
            } while rest > 0
            out.append(contentsOf: UnsafeBufferPointer(rebasing: buffer[start..<20]))
        }
    }

    /// `value` (0 ≤ value < 10^width) zero-padded to `width` digits into `buffer` at `at`.
    static func write(_ value: Int, width: Int, into buffer: UnsafeMutableBufferPointer<UInt8>, at: Int) {
        var rest = value
        var i = at + width
        while i > at {
            i -= 1
            buffer[i] = UInt8(truncatingIfNeeded: 48 &+ rest % 10)
            rest /= 10
        }
    }
}
