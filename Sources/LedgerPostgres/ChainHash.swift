import LedgerCore

/// The hash chain, recomputed in Swift independently of the SQL that wrote
/// it (Migrations/004_event_hash.sql): hash = sha256(previous || content),
/// each field length-prefixed, integers big-endian.
public enum ChainHash {
    public static let genesis = [UInt8](repeating: 0, count: 32)

    public static func hash(previous: [UInt8], event e: StoredEvent) -> [UInt8] {
        var m = previous
        m.reserveCapacity(previous.count + e.payloadJSON.utf8.count + (e.raw?.count ?? 0) + 256)
        appendInt64(&m, e.position)
        appendField(&m, e.eventID)
        appendField(&m, e.stream)
        appendInt32(&m, Int32(truncatingIfNeeded: e.streamVersion))
        appendField(&m, e.type)
        appendField(&m, e.source)
        appendField(&m, e.payloadJSON)
        if let raw = e.raw {
            appendInt32(&m, Int32(truncatingIfNeeded: raw.count))
            m.append(contentsOf: raw)
        } else {
            appendInt32(&m, -1)
        }
        appendField(&m, e.metadataJSON)
        appendField(&m, e.idempotencyKey)
        appendInt64(&m, e.recordedAt.microseconds)
        appendInt64(&m, e.observedAt.microseconds)
        return Crypto.sha256(m)
    }

    private static func appendField(_ m: inout [UInt8], _ s: String) {
        appendInt32(&m, Int32(truncatingIfNeeded: s.utf8.count))
        m.append(contentsOf: s.utf8)
    }

    private static func appendInt32(_ m: inout [UInt8], _ v: Int32) {
        withUnsafeBytes(of: v.bigEndian) { m.append(contentsOf: $0) }
    }

    private static func appendInt64(_ m: inout [UInt8], _ v: Int64) {
        withUnsafeBytes(of: v.bigEndian) { m.append(contentsOf: $0) }
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
