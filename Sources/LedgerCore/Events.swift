/// A merchant backend registered an order it created with a provider.
public struct OrderRegistration: Sendable, Hashable {
    public var merchantOrderNo: MerchantOrderNo
    public var provider: String
    /// The expected amount, exactly as given (validated as a decimal).
    public var amount: String
    public var asset: String
    public var chainId: String?
    public var tokenId: String?
    public var fiatCurrency: String?
    public var fiatAmount: String?
    public var externalCustomerId: String?
    public var providerOrderId: String?
    /// The provider's order-creation response, kept whole.
    public var providerResponse: JSONValue?
    public var registeredAt: Timestamp

    public init(merchantOrderNo: MerchantOrderNo, provider: String, amount: String, asset: String,
                chainId: String? = nil, tokenId: String? = nil, fiatCurrency: String? = nil, fiatAmount: String? = nil,
                externalCustomerId: String? = nil, providerOrderId: String? = nil, providerResponse: JSONValue? = nil,
                registeredAt: Timestamp) {
        self.merchantOrderNo = merchantOrderNo
        self.provider = provider
        self.amount = amount
        self.asset = asset
        self.chainId = chainId
        self.tokenId = tokenId
        self.fiatCurrency = fiatCurrency
        self.fiatAmount = fiatAmount
        self.externalCustomerId = externalCustomerId
        self.providerOrderId = providerOrderId
        self.providerResponse = providerResponse
        self.registeredAt = registeredAt
    }

    /// One registration per order: a second one with this key is the same request again.
    public var idempotencyKey: String { "register:" + merchantOrderNo.value }

    /// Same content apart from when it arrived: answer 200 (duplicate) rather than 409.
    /// Amounts compare by value, so "40" and "40.00" are the same registration; the
    /// provider's response as jsonb holds it (a stored one comes back with its keys in
    /// jsonb's order, a request's has them as sent).
    public func sameContent(as other: OrderRegistration) -> Bool {
        var a = self, b = other
        a.registeredAt = Timestamp(microseconds: 0)
        b.registeredAt = Timestamp(microseconds: 0)
        a.providerResponse = a.providerResponse.map(JSONBText.normalized)
        b.providerResponse = b.providerResponse.map(JSONBText.normalized)
        if let x = ExactDecimal(a.amount), let y = ExactDecimal(b.amount), x == y { b.amount = a.amount }
        if let fa = a.fiatAmount, let fb = b.fiatAmount, let x = ExactDecimal(fa), let y = ExactDecimal(fb), x == y { b.fiatAmount = fa }
        return a == b
    }
}

/// An authoritative observation of an order's status: a verified webhook, a
/// provider query result, or an operator's correction.
public struct StatusObservation: Sendable, Hashable {
    public var merchantOrderNo: MerchantOrderNo
    public var provider: String
    /// webhook, query or operator (never client).
    public var source: EventSource
    public var status: OrderStatus
    /// The provider's own word for the status ("paymentReceived", "3", ...).
    public var providerStatus: String?
    public var observedAt: Timestamp
    public var amount: String?
    public var asset: String?
    public var fiatAmount: String?
    public var fiatCurrency: String?
    public var txHash: String?
    public var providerOrderId: String?
    /// Operator corrections: who and why.
    public var actor: String?
    public var reason: String?
    /// Which configured key verified a webhook (a fingerprint, never the key).
    public var keyId: String?
    /// What the parsed form of the provider's body lacks (`JSONAlteration.list`): parts
    /// jsonb cannot hold, outside the mapped fields. Kept in the metadata, beside `keyId`.
    public var leftOut: JSONValue?
    /// The provider's body or response, as events recorded before the adapters stopped
    /// copying it here held it (the raw bytes beside the event have it byte for byte).
    /// Read back from such events; nil in every event made now.
    public var body: JSONValue?
    public var idempotencyKey: String

    public init(merchantOrderNo: MerchantOrderNo, provider: String, source: EventSource, status: OrderStatus,
                providerStatus: String? = nil, observedAt: Timestamp, amount: String? = nil, asset: String? = nil,
                fiatAmount: String? = nil, fiatCurrency: String? = nil, txHash: String? = nil,
                providerOrderId: String? = nil, actor: String? = nil, reason: String? = nil, keyId: String? = nil,
                leftOut: JSONValue? = nil, body: JSONValue? = nil, idempotencyKey: String) {
        self.merchantOrderNo = merchantOrderNo
        self.provider = provider
        self.source = source
        self.status = status
        self.providerStatus = providerStatus
        self.observedAt = observedAt
        self.amount = amount
        self.asset = asset
        self.fiatAmount = fiatAmount
        self.fiatCurrency = fiatCurrency
        self.txHash = txHash
        self.providerOrderId = providerOrderId
        self.actor = actor
        self.reason = reason
        self.keyId = keyId
        self.leftOut = leftOut
        self.body = body
        self.idempotencyKey = idempotencyKey
    }
}

/// An SDK callback relayed from an app: advisory, never moves the status.
public struct ClientSignal: Sendable, Hashable {
    public var merchantOrderNo: MerchantOrderNo
    public var provider: String
    /// The SDK callback's name (banxaDidCompleteCheckout, close, ...).
    public var callback: String
    /// The callback's data in the shape documented by the adapter.
    public var payload: JSONValue
    /// Lowercased UUID chosen by the app; makes relays idempotent.
    public var clientEventId: String
    /// When the app says the callback fired (part of the request's content).
    public var occurredAt: Timestamp?
    /// occurredAt, or when the ledger received the relay.
    public var observedAt: Timestamp
    public var sdkVersion: String?

    public init(merchantOrderNo: MerchantOrderNo, provider: String, callback: String, payload: JSONValue,
                clientEventId: String, occurredAt: Timestamp? = nil, receivedAt: Timestamp, sdkVersion: String? = nil) {
        self.merchantOrderNo = merchantOrderNo
        self.provider = provider
        self.callback = callback
        self.payload = payload
        self.clientEventId = clientEventId
        self.occurredAt = occurredAt
        self.observedAt = occurredAt ?? receivedAt
        self.sdkVersion = sdkVersion
    }
    /// Scoped to the stream so one order's ids can never shadow another's.
    public var idempotencyKey: String { "client:" + merchantOrderNo.stream + ":" + clientEventId }
}

/// A change to a paid order that does not change its status: a refund.
public struct Adjustment: Sendable, Hashable {
    public var merchantOrderNo: MerchantOrderNo
    public var provider: String
    public var source: EventSource
    /// "refund" today; the field leaves room for chargebacks and fees.
    public var kind: String
    public var amount: String?
    public var asset: String?
    public var providerStatus: String?
    public var observedAt: Timestamp
    public var providerOrderId: String?
    public var keyId: String?
    /// As `StatusObservation.leftOut`.
    public var leftOut: JSONValue?
    /// As `StatusObservation.body`: only in events recorded before it was dropped.
    public var body: JSONValue?
    public var idempotencyKey: String

    public init(merchantOrderNo: MerchantOrderNo, provider: String, source: EventSource, kind: String = "refund",
                amount: String? = nil, asset: String? = nil, providerStatus: String? = nil, observedAt: Timestamp,
                providerOrderId: String? = nil, keyId: String? = nil, leftOut: JSONValue? = nil, body: JSONValue? = nil,
                idempotencyKey: String) {
        self.merchantOrderNo = merchantOrderNo
        self.provider = provider
        self.source = source
        self.kind = kind
        self.amount = amount
        self.asset = asset
        self.providerStatus = providerStatus
        self.observedAt = observedAt
        self.providerOrderId = providerOrderId
        self.keyId = keyId
        self.leftOut = leftOut
        self.body = body
        self.idempotencyKey = idempotencyKey
    }
}

/// A BankPay enrollment callback; enrollments have their own streams.
public struct EnrollmentSignal: Sendable, Hashable {
    /// The merchant's enrollment reference (same alphabet as an order number).
    public var enrollmentRef: String
    public var provider: String
    /// bankAccountAdded, close or error.
    public var callback: String
    public var payload: JSONValue
    public var clientEventId: String
    public var occurredAt: Timestamp?
    /// occurredAt, or when the ledger received the relay.
    public var observedAt: Timestamp
    public var sdkVersion: String?

    public init(enrollmentRef: String, provider: String, callback: String, payload: JSONValue, clientEventId: String,
                occurredAt: Timestamp? = nil, receivedAt: Timestamp, sdkVersion: String? = nil) {
        self.enrollmentRef = enrollmentRef
        self.provider = provider
        self.callback = callback
        self.payload = payload
        self.clientEventId = clientEventId
        self.occurredAt = occurredAt
        self.observedAt = occurredAt ?? receivedAt
        self.sdkVersion = sdkVersion
    }

    public var stream: String { "enrollment-" + enrollmentRef }
    public var idempotencyKey: String { "client:" + stream + ":" + clientEventId }
}

/// Every input the ledger records, in canonical form.
public enum LedgerEvent: Sendable, Hashable {
    case registered(OrderRegistration)
    case observed(StatusObservation)
    case clientSignal(ClientSignal)
    case adjustment(Adjustment)
    case enrollment(EnrollmentSignal)

    /// `order-{merchantOrderNo}` or `enrollment-{ref}`.
    public var stream: String {
        switch self {
        case .registered(let e): return e.merchantOrderNo.stream
        case .observed(let e): return e.merchantOrderNo.stream
        case .clientSignal(let e): return e.merchantOrderNo.stream
        case .adjustment(let e): return e.merchantOrderNo.stream
        case .enrollment(let e): return e.stream
        }
    }

    /// The order this event belongs to (nil for enrollment events).
    public var merchantOrderNo: MerchantOrderNo? {
        switch self {
        case .registered(let e): return e.merchantOrderNo
        case .observed(let e): return e.merchantOrderNo
        case .clientSignal(let e): return e.merchantOrderNo
        case .adjustment(let e): return e.merchantOrderNo
        case .enrollment: return nil
        }
    }

    /// The `type` column: OrderRegistered, StatusObserved, ClientSignal, AdjustmentRecorded, EnrollmentSignal.
    public var type: String {
        switch self {
        case .registered: return EventType.orderRegistered
        case .observed: return EventType.statusObserved
        case .clientSignal: return EventType.clientSignal
        case .adjustment: return EventType.adjustmentRecorded
        case .enrollment: return EventType.enrollmentSignal
        }
    }

    /// The `source` column. A registration is reported by the merchant backend
    /// with its ingest key, like a query result, so it counts as `query`.
    public var source: EventSource {
        switch self {
        case .registered: return .query
        case .observed(let e): return e.source
        case .clientSignal, .enrollment: return .client
        case .adjustment(let e): return e.source
        }
    }

    public var provider: String {
        switch self {
        case .registered(let e): return e.provider
        case .observed(let e): return e.provider
        case .clientSignal(let e): return e.provider
        case .adjustment(let e): return e.provider
        case .enrollment(let e): return e.provider
        }
    }

    /// The provider's own time where the input has one, else when the ledger received it.
    public var observedAt: Timestamp {
        switch self {
        case .registered(let e): return e.registeredAt
        case .observed(let e): return e.observedAt
        case .clientSignal(let e): return e.observedAt
        case .adjustment(let e): return e.observedAt
        case .enrollment(let e): return e.observedAt
        }
    }

    /// Deterministic: the same input always gives the same key, so a redelivery is a duplicate.
    public var idempotencyKey: String {
        switch self {
        case .registered(let e): return e.idempotencyKey
        case .observed(let e): return e.idempotencyKey
        case .clientSignal(let e): return e.idempotencyKey
        case .adjustment(let e): return e.idempotencyKey
        case .enrollment(let e): return e.idempotencyKey
        }
    }

    /// For the exports' columns: the provider's status word, amount, asset and tx hash, where the event has them.
    public var providerStatus: String? {
        switch self {
        case .observed(let e): return e.providerStatus
        case .adjustment(let e): return e.providerStatus
        case .clientSignal(let e): return e.callback
        case .enrollment(let e): return e.callback
        case .registered: return nil
        }
    }

    public var amount: String? {
        switch self {
        case .registered(let e): return e.amount
        case .observed(let e): return e.amount
        case .adjustment(let e): return e.amount
        case .clientSignal, .enrollment: return nil
        }
    }

    public var asset: String? {
        switch self {
        case .registered(let e): return e.asset
        case .observed(let e): return e.asset
        case .adjustment(let e): return e.asset
        case .clientSignal, .enrollment: return nil
        }
    }

    public var txHash: String? {
        if case .observed(let e) = self { return e.txHash }
        return nil
    }
}

/// The event type names stored in `ledger.events.type`.
public enum EventType {
    public static let orderRegistered = "OrderRegistered"
    public static let statusObserved = "StatusObserved"
    public static let clientSignal = "ClientSignal"
    public static let adjustmentRecorded = "AdjustmentRecorded"
    public static let enrollmentSignal = "EnrollmentSignal"
    public static let all = [orderRegistered, statusObserved, clientSignal, adjustmentRecorded, enrollmentSignal]
}

/// An event as stored: the canonical event plus its place in the ledger.
public struct RecordedEvent: Sendable, Hashable {
    public var event: LedgerEvent
    /// The global ledger order (bigint identity in PostgreSQL).
    public var position: Int64
    public var recordedAt: Timestamp

    public init(event: LedgerEvent, position: Int64, recordedAt: Timestamp) {
        self.event = event
        self.position = position
        self.recordedAt = recordedAt
    }

    /// Rebuilds a stored event from its `type`, `payload`, `observed_at` and (optionally) `metadata` columns.
    public init(type: String, payload: JSONValue, observedAt: Timestamp, metadata: JSONValue? = nil,
                position: Int64, recordedAt: Timestamp) throws(CoreError) {
        self.event = try LedgerEvent(type: type, payload: payload, observedAt: observedAt, metadata: metadata)
        self.position = position
        self.recordedAt = recordedAt
    }
}
