import Foundation
import LedgerCore
import LedgerPostgres

/// Read use cases for support staff and auditors.
package struct OrderQueries: Sendable {
    package let pool: ConnectionPool
    package let orders = OrderReadModel()
    package let store = EventStore()

    /// The response body of `GET /v1/orders/{no}`: the stored document, or (for a row
    /// without a current one) the same rendering derived from the stored state.
    package func orderDocument(_ no: MerchantOrderNo, masked: Bool) throws -> [UInt8] {
        let found = try pool.withConnection { c -> [UInt8]? in
            switch try orders.document(no, masked: masked, on: c) {
            case .body(let body): return body
            case .missing: return nil
            case .stale: return try orders.load(no, on: c).map { OrderDocuments($0.0).body(masked: masked) }
            }
        }
        guard let found else { throw ServiceError.notFound("no order \(no.value)") }
        return found
    }

    /// The state as the ledger knew it at `asOf` (events recorded at or before it). The
    /// events it folds are read in one snapshot with the chain around them (`ChainLinks`:
    /// each one's links to both its neighbours); a break throws `ChainBreak`
    /// (`ServiceError.integrityFailure`).
    package func order(_ no: MerchantOrderNo, asOf: Timestamp) throws -> JSONValue {
        let known = try pool.withConnection { connection in
            try connection.readOnlySnapshot { c -> [StoredEvent] in
                let stream = try store.read(stream: no.stream, on: c)
                try ChainLinks().requireWholeStream(stream)
                // Every event's links, those after `asOf` too: an event whose recorded time
                // was moved past it must not leave the view without its break being seen.
                try ChainLinks().require(stream, on: c)
                try OrderTailCheck().require(no, stream: stream, on: c)
                let events = stream.filter { $0.recordedAt <= asOf }
                return events
            }
        }
        guard !known.isEmpty else { throw ServiceError.notFound("order \(no.value) was not known at \(asOf.rfc3339)") }
        return Lifecycle.state(no, try known.map(EventMapping.recorded), asOf: asOf).toJSON()
    }

    /// Every event of an order, oldest first, with its canonical form, read in one snapshot
    /// with the chain around them checked (`ChainLinks`).
    package func history(_ no: MerchantOrderNo) throws -> [(stored: StoredEvent, recorded: RecordedEvent)] {
        try pool.withConnection { try history(no, on: $0) }
    }

    private func history(_ no: MerchantOrderNo, on connection: PostgresConnection) throws -> [(stored: StoredEvent, recorded: RecordedEvent)] {
        let stored = try connection.readOnlySnapshot { c -> [StoredEvent] in
            let events = try store.read(stream: no.stream, on: c)
            try ChainLinks().requireWholeStream(events)
            try ChainLinks().require(events, on: c)
            try OrderTailCheck().require(no, stream: events, on: c)
            return events
        }
        return try stored.map { ($0, try EventMapping.recorded($0)) }
    }

    /// The timeline: each event with the status after it.
    /// The statuses are folded from events whose chain links were checked (`ChainLinks`).
    package func timeline(_ no: MerchantOrderNo, includeRaw: Bool) throws -> JSONValue {
        // One connection for both reads: a route waits for the pool once, within its timeout.
        let (events, redeliveryCount) = try pool.withConnection { c in
            let events = try history(no, on: c)
            return (events, events.isEmpty ? [:] : try store.redeliveries(at: events.map(\.stored.position), on: c))
        }
        guard !events.isEmpty else { throw ServiceError.notFound("no order \(no.value)") }
        let statuses = Lifecycle.statusAfter(no, events.map(\.recorded))
        let items: [JSONValue] = try events.enumerated().map { i, e in
            let metadata = try JSONValue.parse(stored: e.stored.metadataJSON)
            var fields: [(String, JSONValue)] = [
                ("position", .integer(e.stored.position)),
                ("eventId", .string(e.stored.eventID)),
                ("type", .string(e.stored.type)),
                ("source", .string(e.stored.source)),
                ("provider", .string(e.recorded.event.provider)),
                ("recordedAt", .string(e.stored.recordedAt.rfc3339)),
                ("observedAt", .string(e.stored.observedAt.rfc3339)),
                ("verified", .bool(metadata["verifiedBy"]?.stringValue == "signature")),
                ("verifiedBy", metadata["verifiedBy"] ?? .null),
                ("payload", try JSONValue.parse(stored: e.stored.payloadJSON)),
                ("statusAfter", .integer(statuses[i].status.rawValue)),
                ("redeliveries", .integer(redeliveryCount[e.stored.position] ?? 0)),
            ]
            if includeRaw {
                fields.append(("raw", e.stored.raw.map { .string(Data($0).base64EncodedString()) } ?? .null))
                fields.append(("metadata", metadata))
                fields.append(("hash", .string(Hex.encode(e.stored.hash))))
            }
            return .object(fields)
        }
        return .object([("merchantOrderNo", .string(no.value)), ("events", .array(items))])
    }

    /// Newest update first, keyset-paginated: `{orders: [...], nextCursor}` as response bytes.
    package func list(_ f: OrderFilter, masked: Bool) throws -> [UInt8] {
        try pool.withConnection { try OrderList().page(f, masked: masked, on: $0) }
    }

    /// `{position, hash}` of the newest event, and `checkpoint`, the newest signed note
    /// `checkpoints` serves, when there is one.
    package func head(checkpoints: CheckpointQueries) throws -> JSONValue {
        let (position, hash, checkpoint) = try pool.withConnection { c in
            let head = try store.head(on: c)
            return (head.position, head.hash, try checkpoints.newest(on: c))
        }
        var fields: [(String, JSONValue)] = [("position", .integer(position)), ("hash", .string(Hex.encode(hash)))]
        if let checkpoint { fields.append(("checkpoint", checkpoint)) }
        return .object(fields)
    }
}
