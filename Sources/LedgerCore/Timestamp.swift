import Foundation

/// A UTC instant with microsecond precision (PostgreSQL's timestamptz resolution),
/// kept as an integer so that comparisons and hashing are exact.
public struct Timestamp: Hashable, Comparable, Sendable, CustomStringConvertible {
    public var microseconds: Int64

    public init(microseconds: Int64) { self.microseconds = microseconds }
    public init(seconds: Int64) { self.microseconds = seconds &* 1_000_000 }
    public init(date: Date) { self.microseconds = Int64((date.timeIntervalSince1970 * 1_000_000).rounded()) }

    public static func now() -> Timestamp { Timestamp(date: Date()) }

    public var date: Date { Date(timeIntervalSince1970: Double(microseconds) / 1_000_000) }
    public var seconds: Int64 { microseconds >= 0 ? microseconds / 1_000_000 : (microseconds - 999_999) / 1_000_000 }

    public static func < (a: Timestamp, b: Timestamp) -> Bool { a.microseconds < b.microseconds }

    /// RFC 3339 in UTC with `Z`; fractional digits only when the instant has them.
    public var rfc3339: String {
        var b = [UInt8]()
        b.reserveCapacity(27)
        appendRFC3339(to: &b)
        return String(decoding: b, as: UTF8.self)
    }

    /// Appends `rfc3339`'s bytes: written digit by digit into the caller's buffer, as
    /// this runs for every time in every document, payload and log line.
    public func appendRFC3339(to b: inout [UInt8]) {
        let secs = seconds
        let micros = Int(microseconds - secs * 1_000_000)
        let (y, m, d) = Self.civil(fromDays: Int(floorDiv(secs, 86_400)))
        let sod = Int(secs - floorDiv(secs, 86_400) * 86_400)
        if (0...9999).contains(y) {
            withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 4) { t in
                DecimalDigits.write(y, width: 4, into: t, at: 0)
                b.append(contentsOf: t)
            }
        } else {   // a year beyond 9999 or before 0: as String prints it, padded to four digits
            let text = Array(String(y).utf8)
            if text.count < 4 { b.append(contentsOf: [UInt8](repeating: 48, count: 4 - text.count)) }
            b.append(contentsOf: text)
        }
        // "-MM-DDTHH:MM:SS.ffffffZ": filled in a small buffer, copied once.
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 23) { t in
            t[0] = UInt8(ascii: "-"); DecimalDigits.write(m, width: 2, into: t, at: 1)
            t[3] = UInt8(ascii: "-"); DecimalDigits.write(d, width: 2, into: t, at: 4)
            t[6] = UInt8(ascii: "T"); DecimalDigits.write(sod / 3600, width: 2, into: t, at: 7)
            t[9] = UInt8(ascii: ":"); DecimalDigits.write(sod / 60 % 60, width: 2, into: t, at: 10)
            t[12] = UInt8(ascii: ":"); DecimalDigits.write(sod % 60, width: 2, into: t, at: 13)
            var end = 15
            if micros != 0 {
                t[15] = UInt8(ascii: ".")
                DecimalDigits.write(micros, width: 6, into: t, at: 16)
                end = 22
                while t[end - 1] == 48 { end -= 1 }
            }
            t[end] = UInt8(ascii: "Z")
            b.append(contentsOf: UnsafeBufferPointer(rebasing: t[0...end]))
        }
    }

    public var description: String { rfc3339 }

    /// Parses RFC 3339 (`2026-11-01T12:00:00Z`, `...+02:00`, fractional seconds),
    /// and, when `lenient`, also `2024-01-31 12:48:36` or `2024-01-31T12:48:36`
    /// without a zone (read as UTC), or a bare date `2026-11-01` (midnight UTC).
    public static func parse(_ text: String, lenient: Bool = false) -> Timestamp? {
        let b = Array(text.utf8)
        func num(_ from: Int, _ len: Int) -> Int? {
            guard from + len <= b.count else { return nil }
            var v = 0
            for i in from..<(from + len) {
                let c = b[i]
                guard c >= 48 && c <= 57 else { return nil }
                v = v * 10 + Int(c - 48)
            }
            return v
        }
        guard b.count >= 10, let y = num(0, 4), b[4] == UInt8(ascii: "-"), let mo = num(5, 2),
              b[7] == UInt8(ascii: "-"), let d = num(8, 2),
              (1...12).contains(mo), (1...daysIn(month: mo, year: y)).contains(d) else { return nil }
        let days = Int64(daysFromCivil(y, mo, d))
        if b.count == 10 { return lenient ? Timestamp(seconds: days * 86_400) : nil }
        guard b.count >= 19, b[10] == UInt8(ascii: "T") || b[10] == UInt8(ascii: "t") || (lenient && b[10] == UInt8(ascii: " ")),
              let h = num(11, 2), b[13] == UInt8(ascii: ":"), let mi = num(14, 2), b[16] == UInt8(ascii: ":"),
              let s = num(17, 2), h < 24, mi < 60, s < 61 else { return nil }
        var i = 19
        var micros: Int64 = 0
        if i < b.count && b[i] == UInt8(ascii: ".") {
            i += 1
            var digits = 0
            while i < b.count, b[i] >= 48, b[i] <= 57 {
                if digits < 6 { micros = micros * 10 + Int64(b[i] - 48) }
                digits += 1
                i += 1
            }
            guard digits > 0 else { return nil }
            for _ in digits..<max(digits, 6) { micros *= 10 }
        }
        var offset = 0
        if i == b.count {
            guard lenient else { return nil }
        } else if b[i] == UInt8(ascii: "Z") || b[i] == UInt8(ascii: "z") {
            i += 1
        } else if b[i] == UInt8(ascii: "+") || b[i] == UInt8(ascii: "-") {
            guard let oh = num(i + 1, 2), b.count > i + 3, b[i + 3] == UInt8(ascii: ":"), let om = num(i + 4, 2),
                  oh < 24, om < 60 else { return nil }
            offset = (oh * 60 + om) * 60 * (b[i] == UInt8(ascii: "-") ? -1 : 1)
            i += 6
        } else {
            return nil
        }
        guard i == b.count else { return nil }
        let total = days * 86_400 + Int64(h * 3600 + mi * 60 + min(s, 59)) - Int64(offset)
        let parsed = Timestamp(microseconds: total * 1_000_000 + micros)
        // An offset can carry a time written in year 0000 or 9999 out of the years `rfc3339`
        // writes in four digits; such a time would be stored and never read back.
        return (earliest...latest).contains(parsed) ? parsed : nil
    }

    /// The first and last instants `rfc3339` writes as a four-digit year, which `parse` reads back.
    public static let earliest = Timestamp(seconds: Int64(daysFromCivil(0, 1, 1)) * 86_400)
    public static let latest = Timestamp(microseconds: Int64(daysFromCivil(10_000, 1, 1)) * 86_400 * 1_000_000 - 1)

    // Howard Hinnant's days-from-civil algorithms: exact for the proleptic Gregorian calendar.
    static func daysFromCivil(_ year: Int, _ month: Int, _ day: Int) -> Int {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let mp = (month + 9) % 12
        let doy = (153 * mp + 2) / 5 + day - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        return era * 146_097 + doe - 719_468
    }

    static func civil(fromDays z0: Int) -> (Int, Int, Int) {
        let z = z0 + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let doe = z - era * 146_097
        let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let d = doy - (153 * mp + 2) / 5 + 1
        let m = mp < 10 ? mp + 3 : mp - 9
        return (yoe + era * 400 + (m <= 2 ? 1 : 0), m, d)
    }

    static func daysIn(month: Int, year: Int) -> Int {
        switch month {
        case 2: return (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: return 30
        default: return 31
        }
    }
}

private func floorDiv(_ a: Int64, _ b: Int64) -> Int64 { a >= 0 ? a / b : (a - b + 1) / b }

