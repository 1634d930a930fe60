import LedgerCore

/// The links of a run of events read in ledger order (`PeriodEventScan`): the event before
/// the period's first (whose stored hash anchors the run, as `ChainLinks` takes a stored
/// predecessor's hash), every event to the period's last, and the one after it. Each
/// event's hash is recomputed from its content and the hash stored before it
/// (`ChainLinkCheck`); a position missing from the run is a break too. So every event of
/// the period has its links to both neighbours checked, as `ChainLinks` checks them, from
/// rows already at hand.
package struct ChainRunCheck {
    /// The positions recorded in the period, first to last.
    package let period: ClosedRange<Int64>
    /// The ledger's head in the reading snapshot: past it, no event is missing.
    package let head: Int64
    private var previous: (position: Int64, hash: [UInt8])?
    private var links = ChainLinkCheck()
    private var scratch: [UInt8] = []

    package init(period: ClosedRange<Int64>, head: Int64) {
        self.period = period
        self.head = head
    }

    /// Checks the link from the event before `event` to it; throws `ChainBreak` when it fails.
    package mutating func check(_ event: EventCopyRow) throws {
        let p = event.position
        let anchor = period.lowerBound - 1
        if previous == nil && anchor >= 1 {
            guard p == anchor else {
                throw ChainBreak(position: anchor, reason: "event \(anchor) is missing (the next stored position is \(p))")
            }
            previous = (p, event.row.bytes(12) ?? [])
            return
        }
        // Read in ledger order, the run before a gap is at hand: a gap is named from its first position.
        if let before = previous?.position, before < p - 1 {
            throw ChainBreak(position: before + 1, reason: ChainLinkCheck.missing(from: before + 1, before: p))
        }
        links.check(event, previousHash: previous.flatMap { $0.position == p - 1 ? $0.hash : nil }, scratch: &scratch)
        if case .broken(let position, let reason) = links.verdict { throw ChainBreak(position: position, reason: reason) }
        previous = (p, event.row.bytes(12) ?? [])
    }

    /// Once the run was read: throws `ChainBreak` if it ended before the event after the
    /// period's last (an event the head says exists).
    package func finish() throws {
        let last = previous?.position ?? period.lowerBound - 1
        let end = min(period.upperBound + 1, head)
        if last < end {
            throw ChainBreak(position: last + 1, reason: "event \(last + 1) is missing (the head is at position \(head))")
        }
    }
}
