import Foundation
import Testing
import LedgerCore

/// The lifecycle's laws, checked on random event sets from a seeded generator.
/// Expected values are computed here from the event set, independently of the reducer.
@Suite("lifecycle reducer: laws")
struct ReducerPropertyTests {
    static let cases = 10_000
    static let no = orderNo("PROP-1")
    static let amounts = ["40", "40.0", "40.00", "39.99", "40.000000000000000001", "0"]
    static let assets: [String?] = [nil, nil, "USDT", "usdt", "ETH"]

    /// One random scenario: its events (distinct positions) and what it is made of.
    struct Scenario {
        var events: [RecordedEvent]
        var registered: Bool
    }

    static func scenario(_ rng: inout SplitMix64, clients: Bool = true, refunds: Bool = true) -> Scenario {
        var events: [LedgerEvent] = []
        let registered = Bool.random(using: &rng)
        if registered { events.append(registration(no, amount: "40.00", asset: "USDT", at: at(Int64.random(in: 0...5, using: &rng)))) }
        for k in 0..<Int.random(in: 0...7, using: &rng) {
            let status = OrderStatus(rawValue: Int.random(in: 1...6, using: &rng))!
            let source: EventSource = [.webhook, .query, .operator].randomElement(using: &rng)!
            // A narrow time range makes equal observedAt (ties) frequent.
            let time = at(Int64.random(in: 0...6, using: &rng))
            let amount = Bool.random(using: &rng) ? amounts.randomElement(using: &rng)! : nil
            let asset = assets.randomElement(using: &rng)!
            events.append(observation(no, status, at: time, source: source, amount: amount, asset: asset, key: "o\(k)"))
        }
        if clients {
            for k in 0..<Int.random(in: 0...3, using: &rng) {
                events.append(client(no, ["banxaDidCompleteCheckout", "banxaDidFail", "banxaDidDismiss"].randomElement(using: &rng)!,
                                     at: at(Int64.random(in: 0...6, using: &rng)), id: "6f1c2a4e-3f1d-4c8a-9e2b-5d6f7a8b9c0\(k)"))
            }
        }
        if refunds && Int.random(in: 0...3, using: &rng) == 0 {
            events.append(refund(no, amount: amounts.randomElement(using: &rng)!, at: at(Int64.random(in: 0...6, using: &rng))))
        }
        if Int.random(in: 0...4, using: &rng) == 0 {
            events.append(observation(orderNo("OTHER"), .paid, at: at(1)))
        }
        if Int.random(in: 0...4, using: &rng) == 0 {
            // A hand-built "observation" from a client: not authoritative, must count for nothing.
            events.append(observation(no, [.paid, .completed, .expired].randomElement(using: &rng)!, at: at(Int64.random(in: 0...6, using: &rng)), source: .client))
        }
        // Distinct positions with gaps, assigned in a random order; recordedAt unrelated to observedAt.
        var positions = Array(1...Int64(events.count * 3 + 1)).shuffled(using: &rng).prefix(events.count)
        var out: [RecordedEvent] = []
        for e in events {
            let p = positions.removeFirst()
            out.append(RecordedEvent(event: e, position: p, recordedAt: Timestamp(seconds: t0.seconds + 1000 + p * 7 % 13)))
        }
        return Scenario(events: out, registered: registered)
    }

    struct Obs { var position: Int64; var status: OrderStatus; var at: Timestamp; var amount: String?; var asset: String? }

    static func authoritative(_ events: [RecordedEvent]) -> [Obs] {
        events.compactMap { r in
            guard case .observed(let o) = r.event, o.merchantOrderNo == no, o.source.isAuthoritative else { return nil }
            return Obs(position: r.position, status: o.status, at: o.observedAt, amount: o.amount, asset: o.asset)
        }
    }

    static func older(_ a: Obs, _ b: Obs) -> Bool { (a.at, a.position) < (b.at, b.position) }

    @Test("every permutation and duplication of a set of events gives the same whole state, which also survives storage")
    func permutationAndDuplicationInvariance() throws {
        var rng = SplitMix64(seed: 0x5EED_0001)
        for _ in 0..<Self.cases {
            let s = Self.scenario(&rng)
            let reference = fold(Self.no, s.events)
            var mixed = s.events.shuffled(using: &rng)
            for _ in 0..<Int.random(in: 0...4, using: &rng) where !s.events.isEmpty {
                mixed.insert(s.events.randomElement(using: &rng)!, at: Int.random(in: 0...mixed.count, using: &rng))
            }
            let other = fold(Self.no, mixed)
            #expect(other == reference)
            if other != reference { break }
            // Reducing a state again with everything it already has changes nothing.
            #expect(s.events.reduce(reference, OrderState.reduce) == reference)
            let stored = try OrderState(storage: JSONValue.parse(reference.storageJSON().serializedBytes))
            #expect(stored == reference)
            #expect(stored.toJSON() == reference.toJSON())
        }
    }

    @Test("paid holds exactly when an authoritative 3 or 4 exists; otherwise the newest observation decides")
    func paidExactlyWhenAuthoritativePaid() {
        var rng = SplitMix64(seed: 0x5EED_0002)
        for _ in 0..<Self.cases {
            let s = Self.scenario(&rng)
            let state = fold(Self.no, s.events)
            let obs = Self.authoritative(s.events)
            let expected: OrderStatus
            if obs.contains(where: { $0.status == .completed }) {
                expected = .completed
            } else if obs.contains(where: { $0.status == .paid }) {
                expected = .paid
            } else {
                expected = obs.max(by: Self.older)?.status ?? .awaitingPayment
            }
            #expect(state.status == expected)
            #expect(state.paid == obs.contains { $0.status == .paid || $0.status == .completed })
            #expect(state.paid == (state.status == .paid || state.status == .completed))
        }
    }

    @Test("client events never change the status or any flag")
    func clientEventsAreAdvisory() {
        var rng = SplitMix64(seed: 0x5EED_0003)
        for _ in 0..<Self.cases {
            let s = Self.scenario(&rng)
            let without = s.events.filter { if case .clientSignal = $0.event { return false } else { return true } }
            let a = fold(Self.no, s.events), b = fold(Self.no, without)
            #expect(a.status == b.status && a.paid == b.paid && a.attention == b.attention && a.latePayment == b.latePayment)
            #expect(a.conflicts == b.conflicts && a.paidAt == b.paidAt && a.refunded == b.refunded)
            // Nor what the order is: its provider, creation time and amounts.
            #expect(a.provider == b.provider && a.createdAt == b.createdAt && a.paidAmount == b.paidAmount && a.asset == b.asset)
            // Even a hand-built client-sourced "observation" cannot move the status.
            let forged = RecordedEvent(event: observation(Self.no, .completed, at: at(99), source: .client), position: 10_000, recordedAt: at(2000))
            #expect(OrderState.reduce(a, forged).status == a.status)
        }
    }

    @Test("conflict, latePayment and amount_mismatch follow lifecycle.md rules 4 to 6")
    func conflictAndLatePaymentFlags() {
        var rng = SplitMix64(seed: 0x5EED_0004)
        for _ in 0..<Self.cases {
            let s = Self.scenario(&rng)
            let state = fold(Self.no, s.events)
            let obs = Self.authoritative(s.events)
            let firstPaid = obs.filter { $0.status.isPaid }.min(by: Self.older)
            var statusConflicts = Set<Int64>()
            var late = false
            if let first = firstPaid {
                for o in obs where !o.status.isPaid {
                    if Self.older(first, o) { statusConflicts.insert(o.position) }
                    if o.status == .expired && Self.older(o, first) { late = true }
                }
            }
            // Generated amounts: only those equal in value to 40 match "40.00" USDT; an amount in
            // another asset (ETH) matches none of the order's units and is a mismatch too.
            var mismatches = Set<Int64>()
            if s.registered {
                for o in obs where o.status.isPaid {
                    guard let amount = o.amount else { continue }
                    if o.asset != nil && o.asset?.uppercased() != "USDT" || !["40", "40.0", "40.00"].contains(amount) {
                        mismatches.insert(o.position)
                    }
                }
            }
            let statusListed = state.conflicts.filter { $0.kind == .statusConflict }
            let amountListed = state.conflicts.filter { $0.kind == .amountMismatch }
            #expect(Set(statusListed.map(\.position)) == statusConflicts)
            #expect(Set(amountListed.map(\.position)) == mismatches)
            // Each conflicting event listed once, with what it observed (duplicated deliveries included).
            #expect(statusListed.count == statusConflicts.count && amountListed.count == mismatches.count)
            for conflict in statusListed {
                let observed = obs.first { $0.position == conflict.position }
                #expect(conflict.status == observed?.status && conflict.observedAt == observed?.at)
            }
            #expect(state.latePayment == late)
            #expect(state.attention == !(statusConflicts.isEmpty && mismatches.isEmpty))
            #expect(state.paidAt == firstPaid?.at)
        }
    }

    @Test("rule 6 in both of an order's units: its asset and its fiat currency, each compared only with amounts in it")
    func amountCheckInBothUnits() {
        var rng = SplitMix64(seed: 0x5EED_0007)
        // Registered: 40.00 USDT, or 36.50 EUR in fiat. Values the oracle knows: equal, different, unreadable.
        let values = ["40", "40.00", "36.5", "36.50", "37", "0", "x"]
        let assets: [String?] = [nil, "USDT", "usdt", "EUR", "eur", "ETH"]
        let currencies: [String?] = [nil, "EUR", "Eur", "USDT", "USD"]
        func equals(_ value: String, _ expected: String) -> Bool {
            guard value != "x", let v = Decimal(string: value), let e = Decimal(string: expected) else { return false }
            return v == e
        }
        func same(_ a: String?, _ b: String) -> Bool { a?.lowercased() == b.lowercased() }
        for _ in 0..<Self.cases {
            var events: [LedgerEvent] = [.registered(OrderRegistration(
                merchantOrderNo: Self.no, provider: "banxa", amount: "40.00", asset: "USDT",
                fiatCurrency: "EUR", fiatAmount: "36.50", registeredAt: at(0)))]
            var facts: [(status: OrderStatus, amount: String?, asset: String?, fiat: String?, currency: String?)] = []
            for k in 0..<Int.random(in: 1...5, using: &rng) {
                let status = OrderStatus(rawValue: Int.random(in: 1...6, using: &rng))!
                let amount = Bool.random(using: &rng) ? values.randomElement(using: &rng)! : nil
                let asset = assets.randomElement(using: &rng)!
                let currency = currencies.randomElement(using: &rng)!
                let fiat = currency == nil ? nil : values.randomElement(using: &rng)!
                facts.append((status, amount, asset, fiat, currency))
                events.append(.observed(StatusObservation(
                    merchantOrderNo: Self.no, provider: "banxa", source: .webhook, status: status, observedAt: at(Int64(k + 1)),
                    amount: amount, asset: asset, fiatAmount: fiat, fiatCurrency: currency, idempotencyKey: "f\(k)")))
            }
            let recorded = events.enumerated().map { RecordedEvent(event: $1, position: Int64($0 + 1), recordedAt: at(Int64($0))) }
            // The oracle, from the decision "amounts are compared in one unit only": an amount
            // without an asset is in the order's asset; a fiat amount needs its currency.
            // An amount in none of the order's units (ETH, or a USD fiat amount alone) is a
            // mismatch: no rate is applied.
            var expected = Set<Int64>()
            for (k, f) in facts.enumerated() where f.status.isPaid {
                var mismatch = false
                let amountKnown = f.asset == nil || same(f.asset, "USDT") || same(f.asset, "EUR")
                let fiatKnown = f.fiat != nil && (same(f.currency, "EUR") || same(f.currency, "USDT"))
                if let amount = f.amount {
                    if f.asset == nil || same(f.asset, "USDT") { mismatch = mismatch || !equals(amount, "40") }
                    if same(f.asset, "EUR") { mismatch = mismatch || !equals(amount, "36.5") }
                    if !amountKnown && !fiatKnown { mismatch = true }
                }
                if let fiat = f.fiat, let currency = f.currency {
                    if same(currency, "EUR") { mismatch = mismatch || !equals(fiat, "36.5") }
                    if same(currency, "USDT") { mismatch = mismatch || !equals(fiat, "40") }
                    if f.amount == nil && !fiatKnown { mismatch = true }
                }
                if mismatch { expected.insert(Int64(k + 2)) }
            }
            let state = fold(Self.no, recorded)
            let listed = state.conflicts.filter { $0.kind == .amountMismatch }
            #expect(Set(listed.map(\.position)) == expected, "\(facts)")
            #expect(listed.count == expected.count)
        }
    }

    @Test("refunded orders stay paid, with the same status")
    func refundedOrdersStayPaid() {
        var rng = SplitMix64(seed: 0x5EED_0005)
        for _ in 0..<Self.cases {
            let s = Self.scenario(&rng, refunds: false)
            let before = fold(Self.no, s.events)
            let r = RecordedEvent(event: refund(Self.no, amount: "40", at: at(Int64.random(in: 0...9, using: &rng))),
                                  position: 5_000 + Int64.random(in: 0...99, using: &rng), recordedAt: at(3000))
            let after = OrderState.reduce(before, r)
            #expect(after.refunded && after.refundAmount == "40")
            #expect(after.status == before.status && after.paid == before.paid && after.attention == before.attention)
            // And the refund's place in the arrival order does not matter.
            #expect(fold(Self.no, [r] + s.events.shuffled(using: &rng)) == after)
        }
    }
}
