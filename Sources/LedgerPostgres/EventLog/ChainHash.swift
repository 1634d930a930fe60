import LedgerCore

/// The hash chain, recomputed from the columns as PostgreSQL returns them
/// (`payload::text` and all), independently of whichever writer built it
/// (ChainAppend, or ledger.append_events on the SQL path): hash =
/// sha256(previous || content), the content encoded as ledger.event_content
/// (Migrations/012) encodes it: each field length-prefixed, integers big-endian.
public enum ChainHash {
    public static let genesis = [UInt8](repeating: 0, count: 32)

    public static func hash(previous: [UInt8], event e: StoredEvent) -> [UInt8] {
        var m = previous
        m.reserveCapacity(previous.count + e.payloadJSON.utf8.count + (e.raw?.count ?? 0) + 256)
        BinaryField.appendInt64(&m, e.position)
        BinaryField.appendLengthPrefixed(&m, Array(e.eventID.utf8))
        BinaryField.appendLengthPrefixed(&m, Array(e.stream.utf8))
        BinaryField.appendInt32(&m, Int32(truncatingIfNeeded: e.streamVersion))
        BinaryField.appendLengthPrefixed(&m, Array(e.type.utf8))
        BinaryField.appendLengthPrefixed(&m, Array(e.source.utf8))
        BinaryField.appendLengthPrefixed(&m, Array(e.payloadJSON.utf8))
        if let raw = e.raw { BinaryField.appendLengthPrefixed(&m, raw) } else { BinaryField.appendInt32(&m, -1) }
        BinaryField.appendLengthPrefixed(&m, Array(e.metadataJSON.utf8))
        BinaryField.appendLengthPrefixed(&m, Array(e.idempotencyKey.utf8))
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
        var previous = ChainHash.genesis
        var expected: Int64 = 1
        var count: Int64 = 0
        while true {
            let events = try store.read(after: expected - 1, limit: batchSize, on: connection)
            if events.isEmpty { break }
            for event in events {
                if event.position != expected {
                    return .broken(position: expected, reason: "event \(expected) is missing (next stored position is \(event.position))")
                }
                let computed = ChainHash.hash(previous: previous, event: event)
                if computed != event.hash {
                    return .broken(position: event.position, reason: "event \(event.position) does not match its hash: its content or the chain before it was altered")
                }
                try each(event)
                previous = event.hash
                expected += 1
                count += 1
            }
        }
        return .intact(events: count, head: expected - 1)
    }
}
