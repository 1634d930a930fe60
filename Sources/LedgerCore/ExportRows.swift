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

extension ExportedOrder {
    /// The order's row, its cells in the order of `ExportKind.orders.columns`.
    public func write(to w: inout ExportRowWriter) {
        w.text(merchantOrderNo); w.text(provider); w.text(providerOrderId)
        w.integer(Int64(status)); w.text(statusName); w.text(asset)
        w.amount(expectedAmount); w.amount(paidAmount); w.text(fiatCurrency); w.amount(fiatAmount)
        w.text(txHash); w.time(createdAt); w.time(paidAt); w.bool(latePayment); w.bool(attention)
        w.bool(refunded); w.integer(lastPosition)
        w.endRow()
    }

    /// What the row adds to the manifest: the asset paid and the amount paid.
    public func count(in manifest: inout ExportManifest) {
        manifest.counted(asset: asset, amount: paidAmount, position: lastPosition)
    }
}

extension ExportedEvent {
    /// The event's row, its cells in the order of `ExportKind.events.columns`.
    public func write(to w: inout ExportRowWriter) {
        let f = observation
        w.integer(position); w.time(recordedAt); w.time(observedAt); w.text(stream)
        w.text(event.merchantOrderNo?.value); w.text(type); w.text(source); w.text(event.provider)
        w.text(f.providerStatus); w.integer(statusAfter.map { Int64($0.rawValue) }); w.amount(f.amount)
        w.text(f.asset); w.text(f.txHash); w.text(eventID); w.text(Hex.encode(hash))
        w.endRow()
    }

    /// What the row adds to the manifest: the asset and amount the event carries.
    public func count(in manifest: inout ExportManifest) {
        let f = observation
        manifest.counted(asset: f.asset, amount: f.amount, position: position)
    }

    /// The columns only some kinds of event fill.
    private var observation: (providerStatus: String?, amount: String?, asset: String?, txHash: String?) {
        switch event {
        case .registered(let r): return (nil, r.amount, r.asset, nil)
        case .observed(let o): return (o.providerStatus, o.amount, o.asset, o.txHash)
        case .adjustment(let a): return (a.providerStatus, a.amount, a.asset, nil)
        case .clientSignal, .enrollment: return (nil, nil, nil, nil)
        }
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
