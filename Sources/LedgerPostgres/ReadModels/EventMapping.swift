import LedgerCore

/// How the request that carried an event was received: goes to the event's
/// metadata column beside what the core puts there (the signing key id).
package struct Receipt: Sendable {
    package var requestID: String
    /// "signature" for a verified webhook, "token:NAME" for an authenticated API call.
    package var verifiedBy: String
    /// The signature header values as received (never a secret), so an auditor
    /// can re-verify the raw body years later: providers.md.
    package var signedWith: JSONValue? = nil

    package init(requestID: String, verifiedBy: String, signedWith: JSONValue? = nil) {
        self.requestID = requestID
        self.verifiedBy = verifiedBy
        self.signedWith = signedWith
    }
}

/// Converts between the core's canonical events and the store's records.
package enum EventMapping {
    package static func newEvent(_ event: LedgerEvent, raw: [UInt8]?, receipt: Receipt) -> NewEvent {
        var metadata: [(String, JSONValue)] = event.metadata.objectFields ?? []
        metadata.reserveCapacity(metadata.count + 3)
        metadata.append(("requestId", .string(receipt.requestID)))
        metadata.append(("verifiedBy", .string(receipt.verifiedBy)))
        if let signedWith = receipt.signedWith { metadata.append(("signedWith", signedWith)) }
        let payload = JSONBText.payload(event).map { String(decoding: $0, as: UTF8.self) }
        let metadataText = JSONBText.string(.object(metadata))
        return NewEvent(
            stream: event.stream,
            type: event.type,
            source: event.source.rawValue,
            payloadJSON: payload ?? JSONSerializer.string(event.payload),
            raw: raw,
            metadataJSON: metadataText ?? JSONSerializer.string(.object(metadata)),
            idempotencyKey: event.idempotencyKey,
            observedAt: event.observedAt,
            renderedAsJSONB: payload != nil && metadataText != nil)
    }

    // Payload and metadata go out in the form jsonb prints (JSONBText), so the writer
    // hashes and stores them without parsing them again; a value jsonb would refuse
    // keeps its compact form, and PostgreSQL's error.

    /// Rebuilds the canonical event of a stored row.
    package static func recorded(_ stored: StoredEvent) throws -> RecordedEvent {
        try recorded(stored, metadata: try JSONValue.parse(stored: stored.metadataJSON))
    }

    /// Rebuilds the canonical event of a stored row whose metadata column was parsed already.
    package static func recorded(_ stored: StoredEvent, metadata: JSONValue) throws -> RecordedEvent {
        try RecordedEvent(type: stored.type, payload: JSONValue.parse(stored: stored.payloadJSON),
                          observedAt: stored.observedAt, metadata: metadata,
                          position: stored.position, recordedAt: stored.recordedAt)
    }

    /// Rebuilds the canonical event of a row just appended.
    package static func recorded(_ new: NewEvent, _ receipt: EventReceipt) throws -> RecordedEvent {
        try RecordedEvent(type: new.type, payload: JSONValue.parse(stored: new.payloadJSON), observedAt: new.observedAt,
                          metadata: try JSONValue.parse(stored: new.metadataJSON),
                          position: receipt.position, recordedAt: receipt.recordedAt)
    }
}
