import LedgerCore

/// The hash chain walked on from a head already verified from genesis (`ChainVerifier`):
/// what a rebuild checks of the events that arrive while it builds. A value, so a walk
/// can be set back when the transaction that read its events rolls back.
public struct ChainContinuation: Sendable, Equatable {
    /// The position of the last verified event (0 before the first).
    public private(set) var head: Int64
    /// The stored hash of the last verified event (the genesis hash before the first).
    public private(set) var headHash: [UInt8]

    public init(head: Int64, headHash: [UInt8]) {
        self.head = head
        self.headHash = headHash
    }

    /// The walk at genesis.
    public static let genesis = ChainContinuation(head: 0, headHash: ChainHash.genesis)

    /// Checks the next event. `.intact` moves the walk past it; `.broken` names the
    /// position and leaves the walk where it was.
    public mutating func check(_ event: StoredEvent) -> ChainVerdict {
        check(position: event.position, hash: { event.hash }) { ChainHash.hash(previous: $0, event: event) == event.hash }
    }

    /// `check(_:)` of an event read in place (`EventCopyRow`); `scratch` is reused.
    package mutating func check(_ row: EventCopyRow, scratch: inout [UInt8]) -> ChainVerdict {
        check(position: row.position, hash: { row.row.bytes(12) ?? [] }) { row.hashMatches(previous: $0, scratch: &scratch) }
    }

    /// The event at `position`, whose stored hash is `hash()`, follows the head when
    /// `matches` says its stored hash is its content hashed onto the head's.
    private mutating func check(position: Int64, hash: () -> [UInt8], matches: ([UInt8]) -> Bool) -> ChainVerdict {
        let expected = head + 1
        if position != expected {
            return .broken(position: expected, reason: "event \(expected) is missing (next stored position is \(position))")
        }
        if !matches(headHash) {
            return .broken(position: position,
                           reason: "event \(position) does not match its hash: its content or the chain before it was altered")
        }
        head = position
        headHash = hash()
        return .intact(events: 1, head: head)
    }
}
