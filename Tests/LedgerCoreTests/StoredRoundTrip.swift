import Testing
import LedgerCore

/// Stores an event the way the ledger does (type, payload and metadata as JSON
/// text, observed_at as a column) and reads it back.
func storedRoundTrip(_ e: LedgerEvent) -> LedgerEvent? {
    guard let payload = try? JSONValue.parse(e.payload.serializedBytes),
          let metadata = try? JSONValue.parse(e.metadata.serializedBytes) else { return nil }
    return try? LedgerEvent(type: e.type, payload: payload, observedAt: e.observedAt, metadata: metadata)
}
