import LedgerCore

/// The hash chain around a few events, checked without walking it from the start: what
/// a read that folds one order (replay, `asOf`, an export's `status_after`) can afford.
///
/// For each given event at position p it recomputes (with `ChainHash`, as `ChainVerifier`
/// does) two links of the global chain: p's hash from its content and the stored hash of
/// p - 1, and p + 1's hash from its content and p's stored hash. So an event whose content
/// changed fails at p, and one whose content and hash changed fails at p + 1; a missing
/// neighbour fails too. What it cannot see is a rewrite that recomputed every hash from the
/// event up to the head, or a break elsewhere in the chain: `ledger verify` walks the whole
/// chain, and signed checkpoints catch the recomputed rewrite (audit.md).
public struct ChainLinks: Sendable {
    public init() {}

    /// The events must be read with every column (`raw` included), as `EventStore.read` does.
    public func check(_ events: [StoredEvent], on c: PostgresConnection) throws -> ChainVerdict {
        if events.isEmpty { return .intact(events: 0, head: 0) }
        var byPosition: [Int64: StoredEvent] = [:]
        for e in events { byPosition[e.position] = e }
        let successorsToRead = Set(byPosition.keys.map { $0 + 1 }).subtracting(byPosition.keys)
        var toCheck = Array(byPosition.values)
        for next in try read(positions: successorsToRead.sorted(), on: c) where byPosition[next.position] == nil {
            byPosition[next.position] = next
            toCheck.append(next)
        }
        let head = try EventStore().head(on: c).position
        var hashes: [Int64: [UInt8]] = byPosition.mapValues(\.hash)
        let predecessors = Set(toCheck.map { $0.position - 1 }.filter { $0 > 0 && hashes[$0] == nil })
        for (position, hash) in try storedHashes(predecessors.sorted(), on: c) { hashes[position] = hash }

        var broken: (position: Int64, reason: String, missingBefore: Int64?)?
        func found(_ position: Int64, _ reason: String, missingBefore next: Int64? = nil) {
            if broken == nil || position < broken!.position { broken = (position, reason, next) }
        }
        for event in toCheck {
            let p = event.position
            if p > 1 && hashes[p - 1] == nil {
                found(p - 1, "event \(p - 1) is missing (the next stored position is \(p))", missingBefore: p)
                continue
            }
            if ChainHash.hash(previous: p == 1 ? ChainHash.genesis : hashes[p - 1]!, event: event) != event.hash {
                found(p, "event \(p) does not match its hash: its content or the chain before it was altered")
            }
        }
        for p in successorsToRead where byPosition[p] == nil && p <= head {
            found(p, "event \(p) is missing (the head is at position \(head))")
        }
        if let broken, let next = broken.missingBefore {
            // A run of missing events is named from its first position, as `ledger verify` names it.
            let first = (try EventStore().highestPosition(below: next, on: c) ?? 0) + 1
            if first < next - 1 { return .broken(position: first, reason: ChainLinkCheck.missing(from: first, before: next)) }
        }
        if let broken { return .broken(position: broken.position, reason: broken.reason) }
        return .intact(events: Int64(toCheck.count), head: head)
    }

    /// Throws `ChainBreak` unless `events`, one stream's whole, in order, hold its versions
    /// 1, 2, 3... without a gap: an event deleted from the middle of an order's stream leaves
    /// its neighbours' links intact but skips a version. Names the event after the gap.
    public func requireWholeStream(_ events: [StoredEvent]) throws {
        for (i, event) in events.enumerated() where event.streamVersion != i + 1 {
            throw ChainBreak(position: event.position,
                             reason: "stream \(event.stream) skips from version \(i) to \(event.streamVersion) at event \(event.position): an event of it was removed")
        }
    }

    /// Throws `ChainBreak` unless the links around `events` hold.
    public func require(_ events: [StoredEvent], on c: PostgresConnection) throws {
        if case .broken(let position, let reason) = try check(events, on: c) {
            throw ChainBreak(position: position, reason: reason)
        }
    }

    private func read(positions: [Int64], on c: PostgresConnection) throws -> [StoredEvent] {
        if positions.isEmpty { return [] }
        return try EventStore.events(c.query(
            "SELECT \(EventStore.columns) FROM ledger.events WHERE position = ANY($1::bigint[]) ORDER BY position",
            [Self.positionArray(positions)]))
    }

    private func storedHashes(_ positions: [Int64], on c: PostgresConnection) throws -> [(Int64, [UInt8])] {
        if positions.isEmpty { return [] }
        let r = try c.query("SELECT position, hash FROM ledger.events WHERE position = ANY($1::bigint[])",
                            [Self.positionArray(positions)])
        return try (0..<r.count).map { (try r.int64($0, "position"), try r.bytes($0, "hash") ?? []) }
    }

    private static func positionArray(_ positions: [Int64]) -> SQLValue {
        .text("{" + positions.map(String.init).joined(separator: ",") + "}")
    }
}

/// The chain is broken below events a read was about to fold into state: it shows nothing.
public struct ChainBreak: Error, CustomStringConvertible, Sendable {
    public var position: Int64
    public var reason: String

    public init(position: Int64, reason: String) {
        self.position = position
        self.reason = reason
    }

    public var description: String {
        "hash chain broken at position \(position): \(reason); the ledger shows no state folded from a tampered log"
    }
}
