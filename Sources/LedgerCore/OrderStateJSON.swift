/// The order state as JSON: the read model (http-api.md field names) and a
/// storage form holding the facts, which reloads into an identical state.
extension OrderState {
    /// The read model for `GET /v1/orders/{no}` and the orders list.
    /// Optional values are `null` rather than absent, so clients see every field.
    public func toJSON() -> JSONValue {
        func str(_ s: String?) -> JSONValue { s.map(JSONValue.string) ?? .null }
        func time(_ t: Timestamp?) -> JSONValue { t.map { .string($0.rfc3339) } ?? .null }
        return .object([
            ("merchantOrderNo", .string(merchantOrderNo.value)),
            ("provider", str(provider)),
            ("status", .integer(status.rawValue)),
            ("statusName", .string(status.name)),
            ("paid", .bool(paid)),
            ("attention", .bool(attention)),
            ("latePayment", .bool(latePayment)),
            ("refunded", .bool(refunded)),
            ("refundAmount", str(refundAmount)),
            ("refundAsset", str(refundAsset)),
            ("refundedAt", time(refundedAt)),
            ("expectedAmount", str(expectedAmount)),
            ("paidAmount", str(paidAmount)),
            ("asset", str(asset)),
            ("fiatCurrency", str(fiatCurrency)),
            ("fiatAmount", str(fiatAmount)),
            ("externalCustomerId", str(externalCustomerId)),
            ("providerOrderId", str(providerOrderId)),
            ("txHash", str(txHash)),
            ("createdAt", time(createdAt)),
            ("updatedAt", time(updatedAt)),
            ("paidAt", time(paidAt)),
            ("lastClientSignal", lastClientSignal.map { $0.toJSON() } ?? .null),
            ("conflicts", .array(conflicts.map { $0.toJSON() })),
            ("eventCount", .integer(eventCount)),
            ("lastPosition", lastPosition.map { JSONValue.integer($0) } ?? .null),
        ])
    }

    /// Version of the storage form; bump when facts change shape (then rebuild by replay).
    public static let storageVersion = 1

    /// Everything needed to continue folding later (for `ledger.orders`, jsonb).
    public func storageJSON() -> JSONValue {
        .object(dropNils: [
            ("version", .integer(Self.storageVersion)),
            ("merchantOrderNo", .string(merchantOrderNo.value)),
            ("registration", registration.map { r in
                .object(dropNils: [
                    ("position", .integer(r.position)), ("provider", .string(r.provider)),
                    ("amount", .string(r.amount)), ("asset", .string(r.asset)),
                    ("chainId", r.chainId.map(JSONValue.string)), ("tokenId", r.tokenId.map(JSONValue.string)),
                    ("fiatCurrency", r.fiatCurrency.map(JSONValue.string)), ("fiatAmount", r.fiatAmount.map(JSONValue.string)),
                    ("externalCustomerId", r.externalCustomerId.map(JSONValue.string)),
                    ("providerOrderId", r.providerOrderId.map(JSONValue.string)),
                    ("registeredAt", .string(r.registeredAt.rfc3339)),
                ])
            }),
            ("observations", .array(observations.map { o in
                .object(dropNils: [
                    ("position", .integer(o.position)), ("source", .string(o.source.rawValue)),
                    ("provider", .string(o.provider)), ("status", .integer(o.status.rawValue)),
                    ("providerStatus", o.providerStatus.map(JSONValue.string)),
                    ("observedAt", .string(o.observedAt.rfc3339)),
                    ("amount", o.amount.map(JSONValue.string)), ("asset", o.asset.map(JSONValue.string)),
                    ("fiatAmount", o.fiatAmount.map(JSONValue.string)), ("fiatCurrency", o.fiatCurrency.map(JSONValue.string)),
                    ("txHash", o.txHash.map(JSONValue.string)), ("providerOrderId", o.providerOrderId.map(JSONValue.string)),
                ])
            })),
            ("adjustments", .array(adjustments.map { a in
                .object(dropNils: [
                    ("position", .integer(a.position)), ("kind", .string(a.kind)),
                    ("amount", a.amount.map(JSONValue.string)), ("asset", a.asset.map(JSONValue.string)),
                    ("observedAt", .string(a.observedAt.rfc3339)),
                ])
            })),
            ("lastClientSignal", lastClientSignal.map { $0.toJSON() }),
            ("positions", .array(positions.map { .integer($0) })),
            ("firstProvider", firstProvider.map { .object([("position", .integer($0.position)), ("provider", .string($0.text))]) }),
            ("firstObservedAt", firstObservedAt.map { .string($0.rfc3339) }),
            ("updatedAt", updatedAt.map { .string($0.rfc3339) }),
        ])
    }

    /// Reloads a state saved by `storageJSON()`; the result equals the saved state.
    public init(storage: JSONValue) throws(CoreError) {
        let type = "OrderState"
        let p = try StoredPayload(storage, type: type)
        guard p.value("version")?.int64Value == Int64(Self.storageVersion) else {
            throw .invalidEvent(type: type, reason: "the storage version is not \(Self.storageVersion); rebuild by replay")
        }
        self.init(merchantOrderNo: try p.orderNo())
        func position(_ q: StoredPayload) throws(CoreError) -> Int64 {
            guard let n = q.value("position")?.int64Value else { throw .invalidEvent(type: type, reason: "a position is missing") }
            return n
        }
        func list(_ key: String) throws(CoreError) -> [StoredPayload] {
            guard let v = p.value(key), !v.isNull else { return [] }
            guard case .array(let items) = v else { throw .invalidEvent(type: type, reason: "\(key) is not an array") }
            var out: [StoredPayload] = []
            for item in items { out.append(try StoredPayload(item, type: type)) }
            return out
        }
        if let r = p.value("registration"), !r.isNull {
            let q = try StoredPayload(r, type: type)
            registration = RegistrationFact(
                position: try position(q), provider: try q.string("provider"), amount: try q.string("amount"),
                asset: try q.string("asset"), chainId: try q.optionalString("chainId"), tokenId: try q.optionalString("tokenId"),
                fiatCurrency: try q.optionalString("fiatCurrency"), fiatAmount: try q.optionalString("fiatAmount"),
                externalCustomerId: try q.optionalString("externalCustomerId"),
                providerOrderId: try q.optionalString("providerOrderId"), registeredAt: try q.timestamp("registeredAt"))
        }
        for q in try list("observations") {
            guard let code = q.value("status")?.int64Value, let status = OrderStatus(rawValue: Int(truncatingIfNeeded: code)) else {
                throw .invalidEvent(type: type, reason: "an observation's status is not 1-6")
            }
            observations.append(ObservationFact(
                position: try position(q), source: try q.source(), provider: try q.string("provider"), status: status,
                providerStatus: try q.optionalString("providerStatus"), observedAt: try q.timestamp("observedAt"),
                amount: try q.optionalString("amount"), asset: try q.optionalString("asset"),
                fiatAmount: try q.optionalString("fiatAmount"), fiatCurrency: try q.optionalString("fiatCurrency"),
                txHash: try q.optionalString("txHash"), providerOrderId: try q.optionalString("providerOrderId")))
        }
        observations.sort { $0.position < $1.position }
        for q in try list("adjustments") {
            adjustments.append(AdjustmentFact(
                position: try position(q), kind: try q.string("kind"), amount: try q.optionalString("amount"),
                asset: try q.optionalString("asset"), observedAt: try q.timestamp("observedAt")))
        }
        adjustments.sort { $0.position < $1.position }
        if let c = p.value("lastClientSignal"), !c.isNull {
            lastClientSignal = try ClientSignalFact(storage: c)
        }
        guard case .array(let ps)? = p.value("positions") else { throw .invalidEvent(type: type, reason: "positions are missing") }
        var seen: [Int64] = []
        for v in ps {
            guard let n = v.int64Value else { throw .invalidEvent(type: type, reason: "a position is not an integer") }
            seen.append(n)
        }
        positions = Array(Set(seen)).sorted()
        if let f = p.value("firstProvider"), !f.isNull {
            let q = try StoredPayload(f, type: type)
            firstProvider = PositionedText(position: try position(q), text: try q.string("provider"))
        }
        firstObservedAt = try p.optionalTimestamp("firstObservedAt")
        updatedAt = try p.optionalTimestamp("updatedAt")
        deriveFromObservations()
        deriveRefunds()
        deriveIdentity()
    }
}

extension ClientSignalFact {
    public func toJSON() -> JSONValue {
        .object(dropNils: [
            ("position", .integer(position)),
            ("provider", .string(provider)),
            ("callback", .string(callback)),
            ("payload", payload),
            ("clientEventId", .string(clientEventId)),
            ("occurredAt", occurredAt.map { .string($0.rfc3339) }),
            ("observedAt", .string(observedAt.rfc3339)),
        ])
    }

    init(storage: JSONValue) throws(CoreError) {
        let q = try StoredPayload(storage, type: "OrderState")
        guard let n = q.value("position")?.int64Value else { throw .invalidEvent(type: "OrderState", reason: "a position is missing") }
        self.init(position: n, provider: try q.string("provider"), callback: try q.string("callback"),
                  payload: q.value("payload") ?? .null, clientEventId: try q.string("clientEventId"),
                  occurredAt: try q.optionalTimestamp("occurredAt"), observedAt: try q.timestamp("observedAt"))
    }
}

extension OrderConflict {
    public func toJSON() -> JSONValue {
        .object(dropNils: [
            ("position", .integer(position)),
            ("kind", .string(kind.rawValue)),
            ("status", status.map { .integer($0.rawValue) }),
            ("statusName", status.map { .string($0.name) }),
            ("observedAt", .string(observedAt.rfc3339)),
            ("expected", expected.map(JSONValue.string)),
            ("observed", observed.map(JSONValue.string)),
            ("asset", asset.map(JSONValue.string)),
            ("observedAsset", observedAsset.map(JSONValue.string)),
        ])
    }
}
