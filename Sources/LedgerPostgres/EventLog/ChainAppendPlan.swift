import LedgerCore

extension ChainAppend {
    /// What happens to each item of a batch, decided before anything is sent: which
    /// are new (numbered after the head, each with its stream's next version), which
    /// repeat the key of a stored event or of an earlier new item of the batch (a
    /// redelivery when the content is the same, a key conflict when it is not), and
    /// which expected another stream version.
    struct Plan {
        enum Item: Equatable {
            case new(position: Int64, version: Int)
            case duplicate(EventReceipt)
            /// The same as the new item at this index of the batch.
            case duplicateOfNew(Int)
            case keyConflict(EventReceipt)
            /// The key of the new item at this index, with other content.
            case keyConflictWithNew(Int)
            case versionConflict(Int)
        }

        private(set) var items: [Item]
        /// How many items are new.
        private(set) var newCount: Int
        /// The head once the batch is stored: the last new item's position (the start's head without any).
        private(set) var head: Int64

        /// Classifies `events` against what the store holds (`stored`, by key) and numbers
        /// the new ones from `head`. `versions` holds each stream's version before the
        /// batch and is advanced in place to the versions after it.
        init(_ events: [PreparedEvent], stored: [String: Stored], head: Int64, versions: inout [String: Int]) throws {
            var items = [Item]()
            items.reserveCapacity(events.count)
            var fresh: [String: Int] = [:]     // key -> index of the new item that carries it
            fresh.reserveCapacity(events.count)
            var position = head
            for (index, item) in events.enumerated() {
                guard let parts = item.chain else {
                    throw PostgresError.unexpectedResult("an event that cannot be rendered reached the writer's append path")
                }
                let e = item.event
                if let existing = stored[e.idempotencyKey] {
                    let same = existing.stream == e.stream && existing.type == e.type && existing.payloadText == parts.payloadText
                    items.append(same ? .duplicate(existing.receipt) : .keyConflict(existing.receipt))
                } else if let first = fresh[e.idempotencyKey] {
                    let original = events[first]
                    let same = original.event.stream == e.stream && original.event.type == e.type
                        && original.chain?.payloadText == parts.payloadText
                    items.append(same ? .duplicateOfNew(first) : .keyConflictWithNew(first))
                } else {
                    let current = versions[e.stream] ?? 0
                    if let expected = e.expectedVersion, expected != current {
                        items.append(.versionConflict(current))
                        continue
                    }
                    position += 1
                    versions[e.stream] = current + 1
                    fresh[e.idempotencyKey] = index
                    items.append(.new(position: position, version: current + 1))
                }
            }
            self.items = items
            newCount = fresh.count
            self.head = position
        }

        /// Every item's outcome, duplicates with no redelivery count yet. `hashes` holds the
        /// new items' hashes by index.
        func outcomes(_ events: [PreparedEvent], hashes: [Int: [UInt8]], recordedAt: Timestamp) -> [AppendOutcome] {
            func newReceipt(_ index: Int) -> EventReceipt {
                guard case .new(let position, let version) = items[index], let parts = events[index].chain else {
                    preconditionFailure("receipt of an item that was not appended")
                }
                return EventReceipt(position: position, eventID: parts.eventID, streamVersion: version,
                                    recordedAt: recordedAt, hash: hashes[index] ?? [])
            }
            return items.indices.map { index in
                switch items[index] {
                case .new: .appended(newReceipt(index))
                case .duplicate(let receipt): .duplicate(receipt, redeliveries: 0)
                case .duplicateOfNew(let first): .duplicate(newReceipt(first), redeliveries: 0)
                case .keyConflict(let receipt): .keyConflict(existing: receipt)
                case .keyConflictWithNew(let first): .keyConflict(existing: newReceipt(first))
                case .versionConflict(let current): .versionConflict(currentVersion: current)
                }
            }
        }

        /// The duplicates among `outcomes`: which item, and the position of the event it repeats
        /// (one entry per item, so a position repeated twice counts two redeliveries).
        static func duplicates(in outcomes: [AppendOutcome]) -> [(item: Int, position: Int64)] {
            outcomes.indices.compactMap { index in
                if case .duplicate(let receipt, _) = outcomes[index] { return (index, receipt.position) }
                return nil
            }
        }

        /// Fills in each duplicate's redelivery count from its position's total.
        static func fill(_ outcomes: inout [AppendOutcome], redeliveries totals: [Int64: Int64],
                         of duplicates: [(item: Int, position: Int64)]) {
            for (index, position) in duplicates {
                if case .duplicate(let receipt, _) = outcomes[index] {
                    outcomes[index] = .duplicate(receipt, redeliveries: totals[position] ?? 0)
                }
            }
        }
    }
}
