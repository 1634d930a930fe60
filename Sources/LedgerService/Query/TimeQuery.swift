import LedgerCore

/// A time in a query string (`asOf`, `from`, `to`, `updatedFrom`, `updatedTo`, `before`), read as
/// `TimeBound` reads it, or a 400 that says what it takes. A `+` in a query string decodes
/// to a space, so an offset sent as `+01:00` arrives as ` 01:00`: the answer says to send `%2B`.
package enum TimeQuery {
    package static func parse(_ text: String, name: String) throws -> Timestamp {
        guard let time = TimeBound.parse(text) else {
            let plus = text.contains(" ") ? " (a + in a query string is sent as %2B)" : ""
            throw ServiceError.badRequest("\(name) \(text) is not \(TimeBound.forms)\(plus)")
        }
        return time
    }
}
