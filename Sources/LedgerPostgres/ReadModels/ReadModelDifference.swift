import LedgerCore

/// One read-model row that differs from a replay of its events: which row, and in what.
package struct ReadModelDifference: Sendable, Equatable {
    /// The row (or event) it is about: `order P-1`, `enrollment E-1`, `event 7`.
    package var subject: String
    /// What differs: column names (`status`, `paid_amount`, `document`), state fields
    /// (`state.paidAmount`, `state.observations`), or, when the row as a whole is the
    /// difference, one word in parentheses (`(no row)`, `(no events)`, `(unreadable)`).
    package var fields: [String]
    /// The difference in words, naming `subject` and `fields`.
    package var text: String

    package init(subject: String, fields: [String], text: String) {
        self.subject = subject
        self.fields = fields
        self.text = text
    }

    /// The fields of an order's stored state that differ from its replayed state: each
    /// field of the read model (`OrderState.toJSON`, the names GET answers with), then each
    /// stored fact the read model does not show (`OrderState.storageJSON`), as `state.NAME`.
    package static func stateFields(stored: OrderState, replayed: OrderState) -> [String] {
        var differing: [String] = []
        var shown = Set<String>()
        if case .object(let a) = stored.toJSON(), case .object(let b) = replayed.toJSON() {
            let other = Dictionary(b, uniquingKeysWith: { x, _ in x })
            for (key, value) in a {
                shown.insert(key)
                if other[key] != value { differing.append("state." + key) }
            }
        }
        if case .object(let a) = stored.storageJSON(), case .object(let b) = replayed.storageJSON() {
            let mine = Dictionary(a, uniquingKeysWith: { x, _ in x }), other = Dictionary(b, uniquingKeysWith: { x, _ in x })
            let keys = (a.map(\.0) + b.map(\.0).filter { mine[$0] == nil }).filter { !shown.contains($0) }
            for key in keys where mine[key] != other[key] { differing.append("state." + key) }
        }
        // Equal renderings of unequal states: name the state as a whole rather than nothing.
        return differing.isEmpty && stored != replayed ? ["state"] : differing
    }
}
