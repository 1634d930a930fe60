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
        // An order's provider and creation time, when it was not registered, come from what
        // the providers said: an app's relayed callback names its own provider and time, and
        // advisory events move nothing (rule 3).
        if recorded.event.isAuthoritative {
            let observedAt = recorded.event.observedAt
            if firstObservedAt.map({ observedAt < $0 }) ?? true { firstObservedAt = observedAt }
            if firstProvider.map({ position < $0.position }) ?? true { firstProvider = PositionedText(position: position, text: recorded.event.provider) }
        }

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
            // The payload as the store gives it back (JSONBText.normalized): the live fold of a
            // payload as received and a replay from the log must agree byte for byte.
            let fact = ClientSignalFact(position: position, provider: c.provider, callback: c.callback,
                                        payload: JSONBText.normalized(c.payload),
                                        clientEventId: c.clientEventId, occurredAt: c.occurredAt, observedAt: c.observedAt)
            if let current = lastClientSignal {
                let newer = fact.observedAt != current.observedAt ? fact.observedAt > current.observedAt : position > current.position
                if newer { lastClientSignal = fact }
            } else {
                lastClientSignal = fact
            }
        case .adjustment(let a):
            // As for observations: only an authoritative source records a refund.
            guard a.source.isAuthoritative else { break }
            let fact = AdjustmentFact(position: position, kind: a.kind, amount: a.amount, asset: a.asset, observedAt: a.observedAt)
            if let last = adjustments.last, last.position > position {
                adjustments.insert(fact, at: adjustments.firstIndex { $0.position > position } ?? adjustments.count)
            } else {
                adjustments.append(fact)
            }
        case .enrollment:
            break
        }
        switch recorded.event {
        case .registered, .observed: deriveFromObservations()
        case .adjustment: deriveRefunds()
        case .clientSignal, .enrollment: break
        }
        deriveIdentity()
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

    /// Fields that come from the registration, falling back to observations.
    mutating func deriveIdentity() {
        let reg = registration
        provider = reg?.provider ?? firstProvider?.text
        createdAt = reg?.registeredAt ?? firstObservedAt
        expectedAmount = reg?.amount
        externalCustomerId = reg?.externalCustomerId
    }

    /// Recomputes the status, flags and conflicts from the facts (the laws of
    /// lifecycle.md). Works on indices so no observation is copied: this runs per event.
    mutating func deriveFromObservations() {
        let obs = observations
        let n = obs.count
        @inline(__always) func older(_ a: Int, _ b: Int) -> Bool { obs[a].isOlder(than: obs[b]) }
        var newest = -1, firstPaid = -1
        var newestWithAsset = -1, newestWithOrderId = -1, newestWithTx = -1, newestPaidWithTx = -1, newestWithFiat = -1
        var completed = false
        for i in 0..<n {
            let o = obs[i]
            if newest < 0 || older(newest, i) { newest = i }
            if o.status == .completed { completed = true }
            if o.status.isPaid {
                if firstPaid < 0 || older(i, firstPaid) { firstPaid = i }
                if o.txHash != nil, newestPaidWithTx < 0 || older(newestPaidWithTx, i) { newestPaidWithTx = i }
            }
            if o.asset != nil, newestWithAsset < 0 || older(newestWithAsset, i) { newestWithAsset = i }
            if o.providerOrderId != nil, newestWithOrderId < 0 || older(newestWithOrderId, i) { newestWithOrderId = i }
            if o.txHash != nil, newestWithTx < 0 || older(newestWithTx, i) { newestWithTx = i }
            if o.fiatAmount != nil, newestWithFiat < 0 || older(newestWithFiat, i) { newestWithFiat = i }
        }

        // Rule 1: paid is sticky (4 over 3); rule 2: otherwise the newest observation.
        if completed {
            status = .completed
        } else if firstPaid >= 0 {
            status = .paid
        } else {
            status = newest >= 0 ? obs[newest].status : .awaitingPayment
        }
        paid = status.isPaid
        paidAt = firstPaid >= 0 ? obs[firstPaid].observedAt : nil

        var found: [OrderConflict] = []
        var late = false
        if firstPaid >= 0 {
            for i in 0..<n where !obs[i].status.isPaid {
                if older(firstPaid, i) {
                    // Rule 4: a non-paid observation newer than the first paid one.
                    found.append(OrderConflict(position: obs[i].position, kind: .statusConflict, status: obs[i].status,
                                               observedAt: obs[i].observedAt))
                } else if obs[i].status == .expired {
                    // Rule 5: an expiry older than the first payment.
                    late = true
                }
            }
        }
        latePayment = late

        let reg = registration
        asset = reg?.asset ?? (newestWithAsset >= 0 ? obs[newestWithAsset].asset : nil)
        // The paid amount is in `asset`, as exports total it: the first paid observation
        // with an amount in the order's asset (its amount, or its fiat amount when that is
        // in the order's asset; Banxa's crypto amount for an order registered in euros is not).
        var paidIn: (index: Int, amount: String)?
        for i in 0..<n where obs[i].status.isPaid {
            guard let amount = Self.amount(of: obs[i], in: asset) else { continue }
            if paidIn.map({ older(i, $0.index) }) ?? true { paidIn = (i, amount) }
        }
        paidAmount = paidIn?.amount
        providerOrderId = reg?.providerOrderId ?? (newestWithOrderId >= 0 ? obs[newestWithOrderId].providerOrderId : nil)
        let tx = newestPaidWithTx >= 0 ? newestPaidWithTx : newestWithTx
        txHash = tx >= 0 ? obs[tx].txHash : nil
        if let regFiat = reg?.fiatAmount {
            fiatAmount = regFiat
            fiatCurrency = reg?.fiatCurrency
        } else {
            fiatAmount = newestWithFiat >= 0 ? obs[newestWithFiat].fiatAmount : nil
            fiatCurrency = reg?.fiatCurrency ?? (newestWithFiat >= 0 ? obs[newestWithFiat].fiatCurrency : nil)
        }

        // Rule 6: amount check on paid observations, exact decimals.
        if let reg, firstPaid >= 0 {
            for i in 0..<n where obs[i].status.isPaid {
                if let mismatch = Self.amountMismatch(obs[i], reg) { found.append(mismatch) }
            }
        }
        if found.count > 1 {
            found.sort { $0.position != $1.position ? $0.position < $1.position : $0.kind.rawValue < $1.kind.rawValue }
        }
        conflicts = found
        attention = !found.isEmpty
    }

    /// Refunds: recorded beside the status, never replacing it.
    mutating func deriveRefunds() {
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
        // Paid with amounts in none of the order's units (0.01 ETH for a 40 USDT order): no
        // rate is the ledger's to apply, so a person looks.
        let units = [reg.asset, reg.fiatCurrency].compactMap { $0 }
        func known(_ unit: String?) -> Bool { unit == nil || units.contains { sameAsset(unit, $0) } }
        if let amount = o.amount, !known(o.asset), !(o.fiatAmount != nil && o.fiatCurrency != nil && known(o.fiatCurrency)) {
            return OrderConflict(position: o.position, kind: .amountMismatch, observedAt: o.observedAt,
                                 expected: reg.amount, observed: amount, asset: reg.asset, observedAsset: o.asset)
        }
        if o.amount == nil, let amount = o.fiatAmount, let currency = o.fiatCurrency, !known(currency) {
            return OrderConflict(position: o.position, kind: .amountMismatch, observedAt: o.observedAt,
                                 expected: reg.amount, observed: amount, asset: reg.asset, observedAsset: currency)
        }
        return nil
    }

    /// An observation's amount in `asset`: its amount when in that asset (or without one),
    /// else its fiat amount when that is in it; nil when it has none in `asset`.
    static func amount(of o: ObservationFact, in asset: String?) -> String? {
        func same(_ a: String?, _ b: String?) -> Bool { a == nil || b == nil || a == b || a!.lowercased() == b!.lowercased() }
        if let amount = o.amount, same(o.asset, asset) { return amount }
        if let fiat = o.fiatAmount, let currency = o.fiatCurrency, let asset, same(currency, asset) { return fiat }
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

extension LedgerEvent {
    /// Whether the event may shape an order's facts: a registration, or an observation or
    /// adjustment from an authoritative source; never a client's relayed callback.
    var isAuthoritative: Bool {
        switch self {
        case .registered: return true
        case .observed(let o): return o.source.isAuthoritative
        case .adjustment(let a): return a.source.isAuthoritative
        case .clientSignal, .enrollment: return false
        }
    }
}
