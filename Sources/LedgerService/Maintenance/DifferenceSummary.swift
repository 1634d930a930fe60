import LedgerPostgres

/// The review of `ledger verify`'s read-model differences, field by field: how many rows
/// differ in each field, with a few of them as examples. After a reducer change, this is
/// what the new rules would change once `ledger rebuild` applies them (audit.md).
package struct DifferenceSummary: Sendable {
    /// How many rows are named as examples of each field.
    package static let examplesPerField = 3

    package private(set) var total = 0
    package private(set) var orders = 0
    package private(set) var enrollments = 0
    package private(set) var events = 0
    package private(set) var first: ReadModelDifference?
    private var byField: [String: (count: Int, examples: [String])] = [:]
    /// Fields in the order they were first met, so the summary reads the same each run.
    private var fieldOrder: [String] = []

    package init() {}

    package mutating func add(_ d: ReadModelDifference) {
        total += 1
        if first == nil { first = d }
        if d.subject.hasPrefix("order ") { orders += 1 } else if d.subject.hasPrefix("enrollment ") { enrollments += 1 } else { events += 1 }
        for field in d.fields {
            if byField[field] == nil {
                byField[field] = (0, [])
                fieldOrder.append(field)
            }
            byField[field]!.count += 1
            if byField[field]!.examples.count < Self.examplesPerField { byField[field]!.examples.append(d.subject) }
        }
    }

    /// Each field with its count and examples, most frequent first.
    package var fields: [(field: String, count: Int, examples: [String])] {
        fieldOrder.enumerated()
            .sorted { a, b in
                let x = byField[a.element]!.count, y = byField[b.element]!.count
                return x != y ? x > y : a.offset < b.offset
            }
            .map { ($0.element, byField[$0.element]!.count, byField[$0.element]!.examples) }
    }

    /// The summary as lines: one per field, then the totals.
    package var lines: [String] {
        guard total > 0 else { return [] }
        var out = ["differences by field:"]
        for f in fields {
            let more = f.count > f.examples.count ? ", …" : ""
            out.append("  \(f.field): \(f.count) (\(f.examples.joined(separator: ", "))\(more))")
        }
        out.append("summary: \(total) difference(s): \(orders) order(s), \(enrollments) enrollment(s), \(events) event(s)")
        return out
    }
}
