import LedgerCore

/// An event to append: everything but what the ledger assigns (position,
/// event id, stream version, recorded time, hash).
public struct NewEvent: Sendable, Equatable {
    public var stream: String
    public var type: String
    /// webhook, query, operator, client or system.
    public var source: String
    /// The parsed form, as JSON text (stored as jsonb).
    public var payloadJSON: String
    /// The bytes as received, where there were any.
    public var raw: [UInt8]?
    /// Request id, verification verdict, signing key id..., as a JSON object.
    public var metadataJSON: String
    public var idempotencyKey: String
    public var observedAt: Timestamp
    /// When set, the append succeeds only if the stream is at this version.
    public var expectedVersion: Int?
    /// True when `payloadJSON` and `metadataJSON` were rendered by `JSONBText` (already
    /// in the text jsonb prints): the writer then skips checking that they are. Not
    /// part of the event's identity (`==` ignores it).
    public var renderedAsJSONB: Bool

    public init(stream: String, type: String, source: String, payloadJSON: String, raw: [UInt8]? = nil,
                metadataJSON: String = "{}", idempotencyKey: String, observedAt: Timestamp, expectedVersion: Int? = nil,
                renderedAsJSONB: Bool = false) {
        self.stream = stream
        self.type = type
        self.source = source
        self.payloadJSON = payloadJSON
        self.raw = raw
        self.metadataJSON = metadataJSON
        self.idempotencyKey = idempotencyKey
        self.observedAt = observedAt
        self.expectedVersion = expectedVersion
        self.renderedAsJSONB = renderedAsJSONB
    }

    public static func == (a: NewEvent, b: NewEvent) -> Bool {
        a.stream == b.stream && a.type == b.type && a.source == b.source && a.payloadJSON == b.payloadJSON
            && a.raw == b.raw && a.metadataJSON == b.metadataJSON && a.idempotencyKey == b.idempotencyKey
            && a.observedAt == b.observedAt && a.expectedVersion == b.expectedVersion
    }
}

/// What the ledger assigned to an event when it was first appended.
public struct EventReceipt: Sendable, Equatable {
    public var position: Int64
    public var eventID: String
    public var streamVersion: Int
    public var recordedAt: Timestamp
    public var hash: [UInt8]
}

/// The answer to one appended item.
public enum AppendOutcome: Sendable, Equatable {
    /// A new event, committed.
    case appended(EventReceipt)
    /// The key existed with the same content: nothing appended; the original
    /// event, and how many redeliveries it has had.
    case duplicate(EventReceipt, redeliveries: Int64)
    /// The key existed with different content: refused.
    case keyConflict(existing: EventReceipt)
    /// The stream was not at the expected version: refused.
    case versionConflict(currentVersion: Int)

    public var receipt: EventReceipt? {
        switch self {
        case .appended(let r), .duplicate(let r, _), .keyConflict(let r): return r
        case .versionConflict: return nil
        }
    }

    public var isDuplicate: Bool {
        if case .duplicate = self { return true }
        return false
    }
}

/// An event as stored, read back for replay, projection and export.
public struct StoredEvent: Sendable, Equatable {
    public var position: Int64
    public var eventID: String
    public var stream: String
    public var streamVersion: Int
    public var type: String
    public var source: String
    public var payloadJSON: String
    public var raw: [UInt8]?
    public var metadataJSON: String
    public var idempotencyKey: String
    public var recordedAt: Timestamp
    public var observedAt: Timestamp
    public var hash: [UInt8]
}
