import LedgerCore
import LedgerPostgres

/// `ledger replay`: an order's events, oldest first, each with the state after it.
package struct Replay: Sendable {
    package init() {}

    package struct Step: Sendable {
        package var event: StoredEvent
        package var verifiedBy: String
        package var payload: JSONValue
        package var stateAfter: OrderState
    }

    /// The steps up to `asOf` (by recorded time; nil: all); empty for an unknown order.
    /// Throws `ChainBreak` when the chain around the events it would show is broken
    /// (`ChainLinks`: each shown event's links to both its neighbours), or the order's stream
    /// skips a version (an event of it removed), read in one snapshot.
    package func run(_ no: MerchantOrderNo, asOf: Timestamp?, on connection: PostgresConnection) throws -> [Step] {
        let stored = try connection.readOnlySnapshot { c in
            let stream = try EventStore().read(stream: no.stream, on: c)
            try ChainLinks().requireWholeStream(stream)
            // Every event's links, those after `asOf` too (one moved past it is still checked).
            try ChainLinks().require(stream, on: c)
            try OrderTailCheck().require(no, stream: stream, on: c)
            let events = stream.filter { asOf == nil || $0.recordedAt <= asOf! }
            return events
        }
        var state = OrderState(merchantOrderNo: no)
        return try stored.map { event in
            OrderState.reduce(into: &state, try EventMapping.recorded(event))
            let metadata = try JSONValue.parse(stored: event.metadataJSON)
            return Step(event: event, verifiedBy: metadata["verifiedBy"]?.stringValue ?? "unknown",
                        payload: try JSONValue.parse(stored: event.payloadJSON), stateAfter: state)
        }
    }
}
