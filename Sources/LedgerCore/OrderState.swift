/// The read model of one order (lifecycle.md), folded from its events by `OrderState.reduce`.
///
/// Invariant: the state is a function of the *set* of events applied. It keeps
/// the facts it needs (every authoritative observation, the applied positions,
/// the extremes of a few orderings) and recomputes every shown field from them,
/// so any arrival order and any duplication give an identical value.
public struct OrderState: Sendable, Hashable {
    public let merchantOrderNo: MerchantOrderNo

    // MARK: Facts (order-independent accumulations)

    /// The registration with the lowest position (the service refuses a second, different one).
    public internal(set) var registration: RegistrationFact?
    /// Every authoritative observation, sorted by position.
    public internal(set) var observations: [ObservationFact] = []
    /// Every adjustment (refund), sorted by position.
    public internal(set) var adjustments: [AdjustmentFact] = []
    /// The newest client signal by (observedAt, position).
    public internal(set) var lastClientSignal: ClientSignalFact?
    /// Every applied position, sorted: duplicates are recognised here.
    public internal(set) var positions: [Int64] = []
    /// The provider named by the lowest-positioned event (used when the order was never registered).
    var firstProvider: PositionedText?
    /// The earliest observedAt of any event (createdAt when never registered).
    var firstObservedAt: Timestamp?
    /// The latest recordedAt of any event.
    public internal(set) var updatedAt: Timestamp?

    // MARK: Derived (recomputed from the facts after every change)

    public internal(set) var status: OrderStatus = .awaitingPayment
    public internal(set) var paid = false
    public internal(set) var attention = false
    public internal(set) var latePayment = false
    public internal(set) var refunded = false
    public internal(set) var refundAmount: String?
    public internal(set) var refundAsset: String?
    public internal(set) var refundedAt: Timestamp?
    public internal(set) var provider: String?
    public internal(set) var expectedAmount: String?
    public internal(set) var asset: String?
    public internal(set) var paidAmount: String?
    public internal(set) var providerOrderId: String?
    public internal(set) var txHash: String?
    public internal(set) var fiatCurrency: String?
    public internal(set) var fiatAmount: String?
    public internal(set) var externalCustomerId: String?
    public internal(set) var createdAt: Timestamp?
    public internal(set) var paidAt: Timestamp?
    public internal(set) var conflicts: [OrderConflict] = []

    public init(merchantOrderNo: MerchantOrderNo) {
        self.merchantOrderNo = merchantOrderNo
    }

    public var statusName: String { status.name }
    /// Number of distinct events applied.
    public var eventCount: Int { positions.count }
    /// The ledger position of the order's newest event.
    public var lastPosition: Int64? { positions.last }
}

/// A provider name with the position that named it.
struct PositionedText: Sendable, Hashable {
    var position: Int64
    var text: String
}

/// What the state keeps of a registration.
public struct RegistrationFact: Sendable, Hashable {
    public var position: Int64
    public var provider: String
    public var amount: String
    public var asset: String
    public var chainId: String?
    public var tokenId: String?
    public var fiatCurrency: String?
    public var fiatAmount: String?
    public var externalCustomerId: String?
    public var providerOrderId: String?
    public var registeredAt: Timestamp
}

/// What the state keeps of an authoritative observation (not its body).
public struct ObservationFact: Sendable, Hashable {
    public var position: Int64
    public var source: EventSource
    public var provider: String
    public var status: OrderStatus
    public var providerStatus: String?
    public var observedAt: Timestamp
    public var amount: String?
    public var asset: String?
    public var fiatAmount: String?
    public var fiatCurrency: String?
    public var txHash: String?
    public var providerOrderId: String?

    /// Lifecycle order: newest by observedAt, ties broken by ledger position.
    @inline(__always) func isOlder(than other: ObservationFact) -> Bool {
        observedAt != other.observedAt ? observedAt < other.observedAt : position < other.position
    }
}

/// What the state keeps of an adjustment.
public struct AdjustmentFact: Sendable, Hashable {
    public var position: Int64
    public var kind: String
    public var amount: String?
    public var asset: String?
    public var observedAt: Timestamp
}

/// The newest SDK callback, shown to support staff as what the customer saw.
public struct ClientSignalFact: Sendable, Hashable {
    public var position: Int64
    public var provider: String
    public var callback: String
    public var payload: JSONValue
    public var clientEventId: String
    public var occurredAt: Timestamp?
    /// occurredAt, or when the ledger received the relay.
    public var observedAt: Timestamp
}

/// Something the lifecycle records rather than repairs.
public struct OrderConflict: Sendable, Hashable {
    /// The `kind` shown in the read model's conflict list.
    public enum Kind: String, Sendable, Hashable {
        /// A non-paid observation newer than the first paid one.
        case statusConflict = "status_conflict"
        /// A paid observation whose amount differs from the expected amount.
        case amountMismatch = "amount_mismatch"
    }

    public var position: Int64
    public var kind: Kind
    /// For a status conflict: the status observed.
    public var status: OrderStatus?
    public var observedAt: Timestamp
    /// For an amount mismatch: expected and observed amounts, and the asset compared.
    public var expected: String?
    public var observed: String?
    public var asset: String?
    /// For a payment in none of the order's units: the asset the observed amount is in
    /// (`asset` is then the order's, in which `expected` is).
    public var observedAsset: String?
}
