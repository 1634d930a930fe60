/// The order state's two JSON forms written straight to bytes: the writer renders
/// both for every order of every batch, and building the `JSONValue` trees first
/// cost about as much again as serializing them. The bytes equal
/// `JSONSerializer.bytes(toJSON())` and `JSONSerializer.bytes(storageJSON())`
/// exactly (OrderStateBytesTests checks it on generated states); the tree forms
/// stay the definition.
extension OrderState {
    /// `JSONSerializer.bytes(toJSON())`, without the tree.
    public func documentBytes() -> [UInt8] {
        var w = JSONFieldWriter(capacity: 768 + conflicts.count * 160)
        w.openObject()
        w.key("merchantOrderNo"); w.string(merchantOrderNo.value)
        w.string("provider", orNull: provider)
        w.key("status"); w.integer(status.rawValue)
        w.key("statusName"); w.string(status.name)
        w.key("paid"); w.bool(paid)
        w.key("attention"); w.bool(attention)
        w.key("latePayment"); w.bool(latePayment)
        w.key("refunded"); w.bool(refunded)
        w.string("refundAmount", orNull: refundAmount)
        w.string("refundAsset", orNull: refundAsset)
        w.time("refundedAt", orNull: refundedAt)
        w.string("expectedAmount", orNull: expectedAmount)
        w.string("paidAmount", orNull: paidAmount)
        w.string("asset", orNull: asset)
        w.string("fiatCurrency", orNull: fiatCurrency)
        w.string("fiatAmount", orNull: fiatAmount)
        w.string("externalCustomerId", orNull: externalCustomerId)
        w.string("providerOrderId", orNull: providerOrderId)
        w.string("txHash", orNull: txHash)
        w.time("createdAt", orNull: createdAt)
        w.time("updatedAt", orNull: updatedAt)
        w.time("paidAt", orNull: paidAt)
        w.key("lastClientSignal")
        if let lastClientSignal { lastClientSignal.write(to: &w) } else { w.null() }
        w.key("conflicts")
        w.openArray()
        for conflict in conflicts {
            w.element()
            conflict.write(to: &w)
        }
        w.closeArray()
        w.key("eventCount"); w.integer(eventCount)
        w.key("lastPosition")
        if let lastPosition { w.integer(lastPosition) } else { w.null() }
        w.closeObject()
        return w.bytes
    }

    /// `JSONSerializer.bytes(storageJSON())`, without the tree.
    public func storageBytes() -> [UInt8] {
        var w = JSONFieldWriter(capacity: 512 + observations.count * 256 + positions.count * 8)
        w.openObject()
        w.key("version"); w.integer(Self.storageVersion)
        w.key("merchantOrderNo"); w.string(merchantOrderNo.value)
        if let r = registration {
            w.key("registration")
            w.openObject()
            w.key("position"); w.integer(r.position)
            w.key("provider"); w.string(r.provider)
            w.key("amount"); w.string(r.amount)
            w.key("asset"); w.string(r.asset)
            w.string("chainId", ifPresent: r.chainId)
            w.string("tokenId", ifPresent: r.tokenId)
            w.string("fiatCurrency", ifPresent: r.fiatCurrency)
            w.string("fiatAmount", ifPresent: r.fiatAmount)
            w.string("externalCustomerId", ifPresent: r.externalCustomerId)
            w.string("providerOrderId", ifPresent: r.providerOrderId)
            w.key("registeredAt"); w.time(r.registeredAt)
            w.closeObject()
        }
        w.key("observations")
        w.openArray()
        for o in observations {
            w.element()
            w.openObject()
            w.key("position"); w.integer(o.position)
            w.key("source"); w.string(o.source.rawValue)
            w.key("provider"); w.string(o.provider)
            w.key("status"); w.integer(o.status.rawValue)
            w.string("providerStatus", ifPresent: o.providerStatus)
            w.key("observedAt"); w.time(o.observedAt)
            w.string("amount", ifPresent: o.amount)
            w.string("asset", ifPresent: o.asset)
            w.string("fiatAmount", ifPresent: o.fiatAmount)
            w.string("fiatCurrency", ifPresent: o.fiatCurrency)
            w.string("txHash", ifPresent: o.txHash)
            w.string("providerOrderId", ifPresent: o.providerOrderId)
            w.closeObject()
        }
        w.closeArray()
        w.key("adjustments")
        w.openArray()
        for a in adjustments {
            w.element()
            w.openObject()
            w.key("position"); w.integer(a.position)
            w.key("kind"); w.string(a.kind)
            w.string("amount", ifPresent: a.amount)
            w.string("asset", ifPresent: a.asset)
            w.key("observedAt"); w.time(a.observedAt)
            w.closeObject()
        }
        w.closeArray()
        if let lastClientSignal {
            w.key("lastClientSignal")
            lastClientSignal.write(to: &w)
        }
        w.key("positions")
        w.openArray()
        for position in positions {
            w.element()
            w.integer(position)
        }
        w.closeArray()
        if let firstProvider {
            w.key("firstProvider")
            w.openObject()
            w.key("position"); w.integer(firstProvider.position)
            w.key("provider"); w.string(firstProvider.text)
            w.closeObject()
        }
        w.time("firstObservedAt", ifPresent: firstObservedAt)
        w.time("updatedAt", ifPresent: updatedAt)
        w.closeObject()
        return w.bytes
    }
}

extension ClientSignalFact {
    /// `toJSON()`, written in place.
    func write(to w: inout JSONFieldWriter) {
        w.openObject()
        w.key("position"); w.integer(position)
        w.key("provider"); w.string(provider)
        w.key("callback"); w.string(callback)
        w.key("payload"); w.value(payload)
        w.key("clientEventId"); w.string(clientEventId)
        w.time("occurredAt", ifPresent: occurredAt)
        w.key("observedAt"); w.time(observedAt)
        w.closeObject()
    }
}

extension OrderConflict {
    /// `toJSON()`, written in place.
    func write(to w: inout JSONFieldWriter) {
        w.openObject()
        w.key("position"); w.integer(position)
        w.key("kind"); w.string(kind.rawValue)
        if let status {
            w.key("status"); w.integer(status.rawValue)
            w.key("statusName"); w.string(status.name)
        }
        w.key("observedAt"); w.time(observedAt)
        w.string("expected", ifPresent: expected)
        w.string("observed", ifPresent: observed)
        w.string("asset", ifPresent: asset)
        w.string("observedAsset", ifPresent: observedAsset)
        w.closeObject()
    }
}
