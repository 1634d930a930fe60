/// Event payloads: what goes into `ledger.events.payload` (jsonb), and back.
///
/// The payload is the event's *content* only. What depends on the moment of
/// receipt (observedAt when it comes from a header or the clock, the client's
/// receipt time, which key verified a signature) lives in the `observed_at`
/// column and in `metadata`. So a redelivery of the same content (a webhook
/// retried with a new timestamp, a client relay retried later) has an identical
/// payload and the store answers "duplicate", never "key conflict".
///
/// Amounts are always JSON strings (jsonb would rewrite a number's text),
/// times are RFC 3339 with microseconds, optional fields are omitted, and the
/// decoder looks members up by name because jsonb reorders keys.
extension LedgerEvent {
    public var payload: JSONValue {
        switch self {
        case .registered(let e):
            return .object(dropNils: [
                ("merchantOrderNo", .string(e.merchantOrderNo.value)),
                ("provider", .string(e.provider)),
                ("amount", .string(e.amount)),
                ("asset", .string(e.asset)),
                ("chainId", e.chainId.map(JSONValue.string)),
                ("tokenId", e.tokenId.map(JSONValue.string)),
                ("fiatCurrency", e.fiatCurrency.map(JSONValue.string)),
                ("fiatAmount", e.fiatAmount.map(JSONValue.string)),
                ("externalCustomerId", e.externalCustomerId.map(JSONValue.string)),
                ("providerOrderId", e.providerOrderId.map(JSONValue.string)),
                ("providerResponse", e.providerResponse),
            ])
        case .observed(let e):
            return .object(dropNils: [
                ("merchantOrderNo", .string(e.merchantOrderNo.value)),
                ("provider", .string(e.provider)),
                ("source", .string(e.source.rawValue)),
                ("status", .integer(e.status.rawValue)),
                ("statusName", .string(e.status.name)),
                ("providerStatus", e.providerStatus.map(JSONValue.string)),
                ("amount", e.amount.map(JSONValue.string)),
                ("asset", e.asset.map(JSONValue.string)),
                ("fiatAmount", e.fiatAmount.map(JSONValue.string)),
                ("fiatCurrency", e.fiatCurrency.map(JSONValue.string)),
                ("txHash", e.txHash.map(JSONValue.string)),
                ("providerOrderId", e.providerOrderId.map(JSONValue.string)),
                ("actor", e.actor.map(JSONValue.string)),
                ("reason", e.reason.map(JSONValue.string)),
                ("idempotencyKey", .string(e.idempotencyKey)),
                ("body", e.body),
            ])
        case .clientSignal(let e):
            return .object(dropNils: [
                ("merchantOrderNo", .string(e.merchantOrderNo.value)),
                ("provider", .string(e.provider)),
                ("callback", .string(e.callback)),
                ("payload", e.payload),
                ("clientEventId", .string(e.clientEventId)),
                ("occurredAt", e.occurredAt.map { .string($0.rfc3339) }),
                ("sdkVersion", e.sdkVersion.map(JSONValue.string)),
            ])
        case .adjustment(let e):
            return .object(dropNils: [
                ("merchantOrderNo", .string(e.merchantOrderNo.value)),
                ("provider", .string(e.provider)),
                ("source", .string(e.source.rawValue)),
                ("kind", .string(e.kind)),
                ("amount", e.amount.map(JSONValue.string)),
                ("asset", e.asset.map(JSONValue.string)),
                ("providerStatus", e.providerStatus.map(JSONValue.string)),
                ("providerOrderId", e.providerOrderId.map(JSONValue.string)),
                ("idempotencyKey", .string(e.idempotencyKey)),
                ("body", e.body),
            ])
        case .enrollment(let e):
            return .object(dropNils: [
                ("enrollmentRef", .string(e.enrollmentRef)),
                ("provider", .string(e.provider)),
                ("callback", .string(e.callback)),
                ("payload", e.payload),
                ("clientEventId", .string(e.clientEventId)),
                ("occurredAt", e.occurredAt.map { .string($0.rfc3339) }),
                ("sdkVersion", e.sdkVersion.map(JSONValue.string)),
            ])
        }
    }

    /// Receipt details for the `metadata` column: which key verified a webhook, and what
    /// of its body the parsed form could not hold (`leftOut`, only when something was).
    public var metadata: JSONValue {
        switch self {
        case .observed(let e): return Self.receiptMetadata(keyId: e.keyId, leftOut: e.leftOut)
        case .adjustment(let e): return Self.receiptMetadata(keyId: e.keyId, leftOut: e.leftOut)
        default: return .object([])
        }
    }

    private static func receiptMetadata(keyId: String?, leftOut: JSONValue?) -> JSONValue {
        .object(dropNils: [("keyId", keyId.map(JSONValue.string)), ("leftOut", leftOut)])
    }

    /// Rebuilds an event from the stored `type`, `payload`, `observed_at` and, when
    /// given, `metadata` columns; `invalidEvent` if they do not fit.
    public init(type: String, payload: JSONValue, observedAt: Timestamp, metadata: JSONValue? = nil) throws(CoreError) {
        let p = try StoredPayload(payload, type: type)
        let keyId = metadata?["keyId"]?.stringValue
        let leftOut = metadata?["leftOut"]
        switch type {
        case EventType.orderRegistered:
            self = .registered(OrderRegistration(
                merchantOrderNo: try p.orderNo(), provider: try p.string("provider"),
                amount: try p.string("amount"), asset: try p.string("asset"),
                chainId: try p.optionalString("chainId"), tokenId: try p.optionalString("tokenId"),
                fiatCurrency: try p.optionalString("fiatCurrency"), fiatAmount: try p.optionalString("fiatAmount"),
                externalCustomerId: try p.optionalString("externalCustomerId"),
                providerOrderId: try p.optionalString("providerOrderId"),
                providerResponse: p.value("providerResponse"), registeredAt: observedAt))
        case EventType.statusObserved:
            let source = try p.source()
            guard source.isAuthoritative else { throw .invalidEvent(type: type, reason: "a status observation cannot come from a client") }
            guard let code = p.value("status")?.int64Value, let status = OrderStatus(rawValue: Int(truncatingIfNeeded: code)) else {
                throw .invalidEvent(type: type, reason: "status is not 1-6")
            }
            self = .observed(StatusObservation(
                merchantOrderNo: try p.orderNo(), provider: try p.string("provider"), source: source, status: status,
                providerStatus: try p.optionalString("providerStatus"), observedAt: observedAt,
                amount: try p.optionalString("amount"), asset: try p.optionalString("asset"),
                fiatAmount: try p.optionalString("fiatAmount"), fiatCurrency: try p.optionalString("fiatCurrency"),
                txHash: try p.optionalString("txHash"), providerOrderId: try p.optionalString("providerOrderId"),
                actor: try p.optionalString("actor"), reason: try p.optionalString("reason"),
                keyId: keyId, leftOut: leftOut, body: p.value("body"),
                idempotencyKey: try p.string("idempotencyKey")))
        case EventType.clientSignal:
            self = .clientSignal(ClientSignal(
                merchantOrderNo: try p.orderNo(), provider: try p.string("provider"), callback: try p.string("callback"),
                payload: p.value("payload") ?? .null, clientEventId: try p.string("clientEventId"),
                occurredAt: try p.optionalTimestamp("occurredAt"), receivedAt: observedAt,
                sdkVersion: try p.optionalString("sdkVersion")))
        case EventType.adjustmentRecorded:
            self = .adjustment(Adjustment(
                merchantOrderNo: try p.orderNo(), provider: try p.string("provider"), source: try p.source(),
                kind: try p.string("kind"), amount: try p.optionalString("amount"), asset: try p.optionalString("asset"),
                providerStatus: try p.optionalString("providerStatus"), observedAt: observedAt,
                providerOrderId: try p.optionalString("providerOrderId"), keyId: keyId, leftOut: leftOut,
                body: p.value("body"), idempotencyKey: try p.string("idempotencyKey")))
        case EventType.enrollmentSignal:
            let ref = try p.string("enrollmentRef")
            guard MerchantOrderNo.isStoredForm(ref) else { throw .invalidEvent(type: type, reason: "enrollmentRef is not valid") }
            self = .enrollment(EnrollmentSignal(
                enrollmentRef: ref, provider: try p.string("provider"), callback: try p.string("callback"),
                payload: p.value("payload") ?? .null, clientEventId: try p.string("clientEventId"),
                occurredAt: try p.optionalTimestamp("occurredAt"), receivedAt: observedAt,
                sdkVersion: try p.optionalString("sdkVersion")))
        default:
            throw .invalidEvent(type: type, reason: "the type is unknown")
        }
    }
}

/// Reads the ledger's own stored payloads: exact (no trimming, no limits),
/// with errors that say which stored field is wrong.
struct StoredPayload {
    let fields: [(String, JSONValue)]
    let type: String

    init(_ value: JSONValue, type: String) throws(CoreError) {
        guard case .object(let f) = value else { throw .invalidEvent(type: type, reason: "the payload is not an object") }
        fields = f
        self.type = type
    }

    func value(_ key: String) -> JSONValue? { JSONValue.member(key, in: fields) }

    func optionalString(_ key: String) throws(CoreError) -> String? {
        guard let v = value(key), !v.isNull else { return nil }
        guard case .string(let s) = v else { throw .invalidEvent(type: type, reason: "\(key) is not a string") }
        return s
    }

    func string(_ key: String) throws(CoreError) -> String {
        guard let s = try optionalString(key) else { throw .invalidEvent(type: type, reason: "\(key) is missing") }
        return s
    }

    func optionalTimestamp(_ key: String) throws(CoreError) -> Timestamp? {
        guard let s = try optionalString(key) else { return nil }
        guard let t = Timestamp.parse(s) else { throw .invalidEvent(type: type, reason: "\(key) is not an RFC 3339 time") }
        return t
    }

    func timestamp(_ key: String) throws(CoreError) -> Timestamp {
        guard let t = try optionalTimestamp(key) else { throw .invalidEvent(type: type, reason: "\(key) is missing") }
        return t
    }

    func orderNo() throws(CoreError) -> MerchantOrderNo {
        let s = try string("merchantOrderNo")
        // Stored form: an order registered as "." or ".." before they were refused still reads back.
        guard let no = try? MerchantOrderNo(stored: s) else { throw .invalidEvent(type: type, reason: "merchantOrderNo is not valid") }
        return no
    }

    func source() throws(CoreError) -> EventSource {
        guard let s = EventSource(rawValue: try string("source")) else { throw .invalidEvent(type: type, reason: "source is unknown") }
        return s
    }
}
