/// A time a user gives to bound what is read: an export period's `from` and `to` as
/// exports.md has them, `asOf`, the order list's `updatedFrom` and `updatedTo`, the
/// quarantine's `before`, and the same options of the command line. A date (YYYY-MM-DD,
/// meaning 00:00 UTC) or an RFC 3339 time, which carries its offset (`Z` or `±hh:mm`). A
/// time without an offset would be read in a zone its writer never named, and a fraction finer than the
/// ledger's microseconds would be cut without a word: both are refused, and so is a leap
/// second (`:60`), which the ledger's clock has no place for.
public enum TimeBound {
    /// The accepted forms, for the message that refuses another.
    public static let forms = "a date (YYYY-MM-DD, 00:00 UTC) or an RFC 3339 time with its offset (Z or ±hh:mm), to the microsecond at most"

    /// The time `text` names, or nil when it is not one of `forms`.
    public static func parse(_ text: String) -> Timestamp? {
        let utf8 = Array(text.utf8)
        if utf8.count == 10 { return Timestamp.parse(text, lenient: true) }
        guard let time = Timestamp.parse(text), utf8[17] != UInt8(ascii: "6") else { return nil }
        if let dot = utf8.firstIndex(of: UInt8(ascii: ".")),
           utf8[(dot + 1)...].prefix(while: { $0 >= 48 && $0 <= 57 }).count > 6 { return nil }
        return time
    }
}
