/// The two exports' columns and rows (exports.md), built from the core's values only.
public enum ExportKind: String, Sendable, CaseIterable {
    case orders, events

    public var columns: [String] {
        switch self {
        case .orders:
            return ["merchant_order_no", "provider", "provider_order_id", "status", "status_name", "asset",
                    "expected_amount", "paid_amount", "fiat_currency", "fiat_amount", "tx_hash", "created_at",
                    "paid_at", "late_payment", "attention", "refunded", "last_position"]
        case .events:
            return ["position", "recorded_at", "observed_at", "stream", "merchant_order_no", "type", "source",
                    "provider", "provider_status", "status_after", "amount", "asset", "tx_hash", "event_id", "hash"]
        }
    }
}

/// One row of an export, with what the manifest's totals need.
public struct ExportRow: Sendable, Hashable {
    public var cells: [ExportValue]
    /// The asset and amount the row adds to the totals (nil asset: the row adds to none).
    public var asset: String?
    public var amount: String?
    /// The newest ledger position the row reflects.
    public var position: Int64?

    /// An order as it stood at the end of the period.
    public init(order s: OrderState) { self.init(order: ExportedOrder(s)) }

    /// An order's row from its fields (as the read model stores them beside its state).
    public init(order o: ExportedOrder) {
        cells = [.text(o.merchantOrderNo), .text(o.provider), .text(o.providerOrderId),
                 .integer(Int64(o.status)), .text(o.statusName), .text(o.asset),
                 .amount(o.expectedAmount), .amount(o.paidAmount), .text(o.fiatCurrency), .amount(o.fiatAmount),
                 .text(o.txHash), .time(o.createdAt), .time(o.paidAt), .bool(o.latePayment), .bool(o.attention),
                 .bool(o.refunded), .integer(o.lastPosition)]
        asset = o.asset
        amount = o.paidAmount
        position = o.lastPosition
    }

    /// An event in ledger order; `statusAfter` is its order's status after it (nil for
    /// enrollment streams).
    public init(event e: ExportedEvent) {
        var providerStatus: String?, amount: String?, asset: String?, txHash: String?
        switch e.event {
        case .registered(let r): (amount, asset) = (r.amount, r.asset)
        case .observed(let o): (providerStatus, amount, asset, txHash) = (o.providerStatus, o.amount, o.asset, o.txHash)
        case .adjustment(let a): (providerStatus, amount, asset) = (a.providerStatus, a.amount, a.asset)
        case .clientSignal, .enrollment: break
        }
        cells = [.integer(e.position), .time(e.recordedAt), .time(e.observedAt), .text(e.stream),
                 .text(e.event.merchantOrderNo?.value), .text(e.type), .text(e.source), .text(e.event.provider),
                 .text(providerStatus), .integer(e.statusAfter.map { Int64($0.rawValue) }), .amount(amount),
                 .text(asset), .text(txHash), .text(e.eventID), .text(Hex.encode(e.hash))]
        self.asset = asset
        self.amount = amount
        position = e.position
    }
}

/// What an events export needs of a stored event beside its canonical form.
public struct ExportedEvent: Sendable {
    public var position: Int64
    public var recordedAt: Timestamp
    public var observedAt: Timestamp
    public var stream: String
    public var type: String
    public var source: String
    public var eventID: String
    public var hash: [UInt8]
    public var event: LedgerEvent
    public var statusAfter: OrderStatus?

    public init(position: Int64, recordedAt: Timestamp, observedAt: Timestamp, stream: String, type: String,
                source: String, eventID: String, hash: [UInt8], event: LedgerEvent, statusAfter: OrderStatus?) {
        self.position = position
        self.recordedAt = recordedAt
        self.observedAt = observedAt
        self.stream = stream
        self.type = type
        self.source = source
        self.eventID = eventID
        self.hash = hash
        self.event = event
        self.statusAfter = statusAfter
    }
}
