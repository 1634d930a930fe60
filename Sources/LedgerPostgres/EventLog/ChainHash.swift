import LedgerCore

/// The hash chain, recomputed from the columns as PostgreSQL returns them
/// (`payload::text` and all), independently of whichever writer built it
/// (ChainAppend, or ledger.append_events on the SQL path): hash =
/// sha256(previous || content), the content encoded as ledger.event_content
/// (Migrations/012) encodes it: each field length-prefixed, integers big-endian.
public enum ChainHash {
    public static let genesis = [UInt8](repeating: 0, count: 32)

    public static func hash(previous: [UInt8], event e: StoredEvent) -> [UInt8] {
        var m: [UInt8] = []
        m.reserveCapacity(previous.count + e.payloadJSON.utf8.count + e.metadataJSON.utf8.count + (e.raw?.count ?? 0) + 256)
        m.append(contentsOf: previous)
        BinaryField.appendInt64(&m, e.position)
        BinaryField.appendLengthPrefixed(&m, e.eventID)
        BinaryField.appendLengthPrefixed(&m, e.stream)
        BinaryField.appendInt32(&m, Int32(truncatingIfNeeded: e.streamVersion))
        BinaryField.appendLengthPrefixed(&m, e.type)
        BinaryField.appendLengthPrefixed(&m, e.source)
        BinaryField.appendLengthPrefixed(&m, e.payloadJSON)
        if let raw = e.raw { BinaryField.appendLengthPrefixed(&m, raw) } else { BinaryField.appendInt32(&m, -1) }
        BinaryField.appendLengthPrefixed(&m, e.metadataJSON)
        BinaryField.appendLengthPrefixed(&m, e.idempotencyKey)
        BinaryField.appendInt64(&m, e.recordedAt.microseconds)
        BinaryField.appendInt64(&m, e.observedAt.microseconds)
        return Crypto.sha256(m)
    }
}

/// The verdict of walking the chain.
public enum ChainVerdict: Sendable, Equatable {
    case intact(events: Int64, head: Int64)
    /// The first position whose stored hash, or whose place in the sequence, is wrong.
    case broken(position: Int64, reason: String)
}

/// Walks every event in order and checks positions and hashes.
public struct ChainVerifier: Sendable {
    public var batchSize: Int

    public init(batchSize: Int = 2000) { self.batchSize = batchSize }

    public func verify(on connection: PostgresConnection, store: EventStore = EventStore(),
                       each: (StoredEvent) throws -> Void = { _ in }) throws -> ChainVerdict {
        var walk = ChainContinuation.genesis
        var count: Int64 = 0
        while true {
            let events = try store.read(after: walk.head, limit: batchSize, on: connection)
            if events.isEmpty { break }
            for event in events {
                if case .broken(let position, let reason) = walk.check(event) {
                    return .broken(position: position, reason: reason)
                }
                try each(event)
                count += 1
            }
        }
        return .intact(events: count, head: walk.head)
    }
}
