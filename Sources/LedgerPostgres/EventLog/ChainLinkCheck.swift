import LedgerCore

/// The whole hash chain checked one link at a time, in any order: each event's hash
/// recomputed (`ChainHash`) from its content and the stored hash of the position before
/// it. Every link holding, with every position from 1 to the highest present, is the
/// chain verified from genesis: so a scan in stream order (`EventLogScan`) verifies it
/// as a walk in ledger order would, and names the same first broken position.
package struct ChainLinkCheck: Sendable {
    package private(set) var events: Int64 = 0
    package private(set) var head: Int64 = 0
    private var broken: (position: Int64, reason: String)?
    /// When the lowest break is a missing event: the next stored position after it.
    private var missingBefore: Int64?

    package init() {}

    /// Checks the link from the position before `row`'s event (whose stored hash is
    /// `previousHash`, nil when no event is stored there) to it. `scratch` is reused.
    package mutating func check(_ row: EventCopyRow, previousHash: [UInt8]?, scratch: inout [UInt8]) {
        check(position: row.position, previousHash: previousHash) { row.hashMatches(previous: $0, scratch: &scratch) }
    }

    /// Checks the link to the event at `p`: `matches` says whether its stored hash is
    /// its content hashed onto the hash it is given.
    private mutating func check(position p: Int64, previousHash: [UInt8]?, matches: ([UInt8]) -> Bool) {
        events += 1
        head = max(head, p)
        if p < 1 {
            found(p, "event \(p) has a position below 1: the log was altered")
            return
        }
        if p > 1 && previousHash == nil {
            found(p - 1, Self.missing(from: p - 1, before: p), missingBefore: p)
            return
        }
        if !matches(previousHash ?? ChainHash.genesis) {
            found(p, "event \(p) does not match its hash: its content or the chain before it was altered")
        }
    }

    /// Once every event was checked: intact, or broken at the lowest position that failed.
    package var verdict: ChainVerdict {
        if let broken { return .broken(position: broken.position, reason: broken.reason) }
        return .intact(events: events, head: head)
    }

    private mutating func found(_ position: Int64, _ reason: String, missingBefore next: Int64? = nil) {
        if broken == nil || position < broken!.position {
            broken = (position, reason)
            missingBefore = next
        }
    }

    /// A scan sees only the last position of a run of missing events (the one before the next
    /// stored event). When that is the lowest break, `highestStored(below:)` (the highest
    /// stored position below a position, nil when none) names the run's first: the verdict
    /// then names the first missing position, as a walk from genesis does.
    package mutating func widenMissingRun(highestStored below: (Int64) throws -> Int64?) rethrows {
        guard let next = missingBefore else { return }
        let first = (try below(next) ?? 0) + 1
        guard first < next - 1 else { return }
        broken = (first, Self.missing(from: first, before: next))
    }

    /// Why the chain breaks where the events from `first` up to the stored one at `next` are gone.
    package static func missing(from first: Int64, before next: Int64) -> String {
        first == next - 1 ? "event \(first) is missing (next stored position is \(next))"
                          : "events \(first) to \(next - 1) are missing (next stored position is \(next))"
    }
}
