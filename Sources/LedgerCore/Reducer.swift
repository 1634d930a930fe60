/// The lifecycle reducer (lifecycle.md): pure and total.
extension OrderState {
    /// Folds one recorded event into the state. Events of other streams
    /// (another order, an enrollment) and positions already applied leave
    /// the state exactly as it was.
    public static func reduce(_ state: OrderState, _ event: RecordedEvent) -> OrderState {
        var s = state
        s.apply(event)
        return s
    }

    /// In-place form of `reduce`, for folding many events without copies.
    public static func reduce(into state: inout OrderState, _ event: RecordedEvent) {
        state.apply(event)
    }

    /// Folds events (in any order) into a fresh state.
    public static func replay<S: Sequence>(_ merchantOrderNo: MerchantOrderNo, _ events: S) -> OrderState where S.Element == RecordedEvent {
        var s = OrderState(merchantOrderNo: merchantOrderNo)
        for e in events { s.apply(e) }
        return s
    }

    mutating func apply(_ recorded: RecordedEvent) {
        guard let orderNo = recorded.event.merchantOrderNo, orderNo == merchantOrderNo else { return }
        let position = recorded.position
        // Duplicates are inert: a position is applied once.
        let slot = Self.insertionIndex(of: position, in: positions)
        if slot < positions.count && positions[slot] == position { return }
        positions.insert(position, at: slot)

        if updatedAt.map({ recorded.recordedAt > $0 }) ?? true { updatedAt = recorded.recordedAt }
        let observedAt = recorded.event.observedAt
        if firstObservedAt.map({ observedAt < $0 }) ?? true { firstObservedAt = observedAt }
        if firstProvider.map({ position < $0.position }) ?? true { firstProvider = PositionedText(position: position, text: recorded.event.provider) }

        switch recorded.event {
        case .registered(let r):
            if registration.map({ position < $0.position }) ?? true {
                registration = RegistrationFact(
                    position: position, provider: r.provider, amount: r.amount, asset: r.asset, chainId: r.chainId,
                    tokenId: r.tokenId, fiatCurrency: r.fiatCurrency, fiatAmount: r.fiatAmount,
                    externalCustomerId: r.externalCustomerId, providerOrderId: r.providerOrderId, registeredAt: r.registeredAt)
            }
        case .observed(let o):
            // A stored observation always has an authoritative source; check anyway so a
            // hand-built client "observation" can never move the status.
            guard o.source.isAuthoritative else { break }
            let fact = ObservationFact(
                position: position, source: o.source, provider: o.provider, status: o.status,
                providerStatus: o.providerStatus, observedAt: o.observedAt, amount: o.amount, asset: o.asset,
                fiatAmount: o.fiatAmount, fiatCurrency: o.fiatCurrency, txHash: o.txHash, providerOrderId: o.providerOrderId)
            if let last = observations.last, last.position > position {
                observations.insert(fact, at: observations.firstIndex { $0.position > position } ?? observations.count)
            } else {
                observations.append(fact)
            }
        case .clientSignal(let c):
            let fact = ClientSignalFact(position: position, provider: c.provider, callback: c.callback, payload: c.payload,
                                        clientEventId: c.clientEventId, occurredAt: c.occurredAt, receivedAt: c.receivedAt)
            if let current = lastClientSignal {
                let newer = fact.observedAt != current.observedAt ? fact.observedAt > current.observedAt : position > current.position
                if newer { lastClientSignal = fact }
            } else {
                lastClientSignal = fact
            }
        case .adjustment(let a):
            let fact = AdjustmentFact(position: position, kind: a.kind, amount: a.amount, asset: a.asset, observedAt: a.observedAt)
            if let last = adjustments.last, last.position > position {
                adjustments.insert(fact, at: adjustments.firstIndex { $0.position > position } ?? adjustments.count)
            } else {
                adjustments.append(fact)
            }
        case .enrollment:
            break
        }
        derive()
    }

    /// First index whose value is >= `value` in a sorted array.
    static func insertionIndex(of value: Int64, in sorted: [Int64]) -> Int {
        if let last = sorted.last, last < value { return sorted.count }
        var lo = 0, hi = sorted.count
        while lo < hi {
            let mid = (lo + hi) / 2
            if sorted[mid] < value { lo = mid + 1 } else { hi = mid }
        }
        return lo
    }

    /// Recomputes every shown field from the facts (the laws of lifecycle.md).
    mutating func derive() {
        var newest: ObservationFact? = nil
        var firstPaid: ObservationFact? = nil
        var firstPaidWithAmount: ObservationFact? = nil
        var completed = false
        var newestWithAsset: ObservationFact? = nil
        var newestWithOrderId: ObservationFact? = nil
        var newestWithTx: ObservationFact? = nil
        var newestPaidWithTx: ObservationFact? = nil
        var newestWithFiat: ObservationFact? = nil
        for o in observations {
            if newest.map({ $0.isOlder(than: o) }) ?? true { newest = o }
            if o.status == .completed { completed = true }
            if o.status.isPaid {
                if firstPaid.map({ o.isOlder(than: $0) }) ?? true { firstPaid = o }
                if o.amount != nil, firstPaidWithAmount.map({ o.isOlder(than: $0) }) ?? true { firstPaidWithAmount = o }
                if o.txHash != nil, newestPaidWithTx.map({ $0.isOlder(than: o) }) ?? true { newestPaidWithTx = o }
            }
            if o.asset != nil, newestWithAsset.map({ $0.isOlder(than: o) }) ?? true { newestWithAsset = o }
            if o.providerOrderId != nil, newestWithOrderId.map({ $0.isOlder(than: o) }) ?? true { newestWithOrderId = o }
            if o.txHash != nil, newestWithTx.map({ $0.isOlder(than: o) }) ?? true { newestWithTx = o }
            if o.fiatAmount != nil, newestWithFiat.map({ $0.isOlder(than: o) }) ?? true { newestWithFiat = o }
        }

        // Rule 1: paid is sticky (4 over 3); rule 2: otherwise the newest observation.
        if completed {
            status = .completed
        } else if firstPaid != nil {
            status = .paid
        } else {
            status = newest?.status ?? .awaitingPayment
        }
        paid = status.isPaid
        paidAt = firstPaid?.observedAt
        paidAmount = firstPaidWithAmount?.amount

        var found: [OrderConflict] = []
        var late = false
        if let first = firstPaid {
            for o in observations where !o.status.isPaid {
                if first.isOlder(than: o) {
                    // Rule 4: a non-paid observation newer than the first paid one.
                    found.append(OrderConflict(position: o.position, kind: .statusConflict, status: o.status, observedAt: o.observedAt))
                } else if o.status == .expired {
                    // Rule 5: an expiry older than the first payment.
                    late = true
                }
            }
        }
        latePayment = late

        let reg = registration
        provider = reg?.provider ?? firstProvider?.text
        expectedAmount = reg?.amount
        asset = reg?.asset ?? newestWithAsset?.asset
        providerOrderId = reg?.providerOrderId ?? newestWithOrderId?.providerOrderId
        txHash = (newestPaidWithTx ?? newestWithTx)?.txHash
        if let regFiat = reg?.fiatAmount {
            fiatAmount = regFiat
            fiatCurrency = reg?.fiatCurrency
        } else {
            fiatAmount = newestWithFiat?.fiatAmount
            fiatCurrency = reg?.fiatCurrency ?? newestWithFiat?.fiatCurrency
        }
        externalCustomerId = reg?.externalCustomerId
        createdAt = reg?.registeredAt ?? firstObservedAt

        // Rule 6: amount check on paid observations, exact decimals.
        if let reg {
            for o in observations where o.status.isPaid {
                if let mismatch = Self.amountMismatch(o, reg) { found.append(mismatch) }
            }
        }
        if found.count > 1 {
            found.sort { $0.position != $1.position ? $0.position < $1.position : $0.kind.rawValue < $1.kind.rawValue }
        }
        conflicts = found
        attention = !found.isEmpty

        // Refunds: recorded beside the status, never replacing it.
        var newestRefund: AdjustmentFact? = nil
        for a in adjustments where a.kind == "refund" {
            if let r = newestRefund {
                if a.observedAt != r.observedAt ? a.observedAt > r.observedAt : a.position > r.position { newestRefund = a }
            } else {
                newestRefund = a
            }
        }
        refunded = newestRefund != nil
        refundAmount = newestRefund?.amount
        refundAsset = newestRefund?.asset
        refundedAt = newestRefund?.observedAt
    }

    /// Compares an observation's amounts with the registration's where they are
    /// in the same asset (an observation without an asset is taken to be in the
    /// order's asset). Unreadable amounts count as a mismatch: better a human
    /// looks than a wrong amount passes.
    static func amountMismatch(_ o: ObservationFact, _ reg: RegistrationFact) -> OrderConflict? {
        func sameAsset(_ a: String?, _ b: String?) -> Bool {
            guard let a, let b else { return a == nil }
            return a == b || a.lowercased() == b.lowercased()
        }
        func differs(_ x: String, _ y: String) -> Bool {
            if x == y { return false }
            guard let dx = ExactDecimal(x), let dy = ExactDecimal(y) else { return true }
            return dx != dy
        }
        // Candidate expected amounts: the order amount in its asset, and the fiat amount in its currency.
        if let amount = o.amount {
            if sameAsset(o.asset, reg.asset), differs(reg.amount, amount) {
                return OrderConflict(position: o.position, kind: .amountMismatch, observedAt: o.observedAt,
                                     expected: reg.amount, observed: amount, asset: reg.asset)
            }
            if let fa = reg.fiatAmount, let fc = reg.fiatCurrency, o.asset != nil, sameAsset(o.asset, fc), differs(fa, amount) {
                return OrderConflict(position: o.position, kind: .amountMismatch, observedAt: o.observedAt,
                                     expected: fa, observed: amount, asset: fc)
            }
        }
        if let amount = o.fiatAmount, let currency = o.fiatCurrency {
            if let fa = reg.fiatAmount, sameAsset(currency, reg.fiatCurrency), differs(fa, amount) {
                return OrderConflict(position: o.position, kind: .amountMismatch, observedAt: o.observedAt,
                                     expected: fa, observed: amount, asset: reg.fiatCurrency)
            }
            if sameAsset(currency, reg.asset), differs(reg.amount, amount) {
                return OrderConflict(position: o.position, kind: .amountMismatch, observedAt: o.observedAt,
                                     expected: reg.amount, observed: amount, asset: reg.asset)
            }
        }
        return nil
    }
}

/// Helpers for timelines and replays.
public enum Lifecycle {
    /// The status after each event, folding in ledger (position) order, as the
    /// timeline's `statusAfter` column shows it. Events of other streams get the
    /// status the order had at that point.
    public static func statusAfter(_ merchantOrderNo: MerchantOrderNo, _ events: [RecordedEvent]) -> [(position: Int64, status: OrderStatus)] {
        var state = OrderState(merchantOrderNo: merchantOrderNo)
        var out: [(position: Int64, status: OrderStatus)] = []
        out.reserveCapacity(events.count)
        for e in events.sorted(by: { $0.position < $1.position }) {
            state.apply(e)
            out.append((e.position, state.status))
        }
        return out
    }

    /// The state as the ledger knew it at `asOf`: only events recorded at or before it.
    public static func state(_ merchantOrderNo: MerchantOrderNo, _ events: [RecordedEvent], asOf: Timestamp) -> OrderState {
        OrderState.replay(merchantOrderNo, events.lazy.filter { $0.recordedAt <= asOf })
    }
}
