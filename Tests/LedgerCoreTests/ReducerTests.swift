import Testing
import LedgerCore

/// Worked examples of each lifecycle.md rule, stating the fields that change.
@Suite("lifecycle reducer: examples")
struct ReducerTests {
    let no = orderNo("SO-1")

    @Test("a registered order with no observation awaits payment and shows the registration")
    func registeredOnly() {
        let s = fold(no, recorded([registration(no)]))
        #expect(s.status == .awaitingPayment && !s.paid && !s.attention)
        #expect(s.expectedAmount == "40.00" && s.asset == "USDT" && s.provider == "web3" && s.createdAt == t0)
        #expect(s.eventCount == 1 && s.lastPosition == 1)
    }

    @Test("paid is sticky: a later expiry is a conflict, not a status change")
    func paidIsSticky() {
        let s = fold(no, recorded([registration(no), observation(no, .paid, at: at(10)), observation(no, .expired, at: at(20))]))
        #expect(s.status == .paid && s.paid && s.attention)
        #expect(s.conflicts.map(\.position) == [3] && s.conflicts[0].kind == .statusConflict && s.conflicts[0].status == .expired)
        #expect(s.paidAt == at(10))
    }

    @Test("completed wins over paid whatever the times")
    func completedWins() {
        let s = fold(no, recorded([observation(no, .completed, at: at(5)), observation(no, .paid, at: at(10))]))
        #expect(s.status == .completed && s.paid && !s.attention)
    }

    @Test("without a payment the newest observation wins, ties broken by position")
    func newestWins() {
        let s = fold(no, recorded([observation(no, .confirming, at: at(20)), observation(no, .expired, at: at(10))]))
        #expect(s.status == .confirming)
        let tie = fold(no, recorded([observation(no, .expired, at: at(10)), observation(no, .manualReview, at: at(10))]))
        #expect(tie.status == .manualReview)
    }

    @Test("status 5 and 6 are not paid")
    func fiveAndSixAreNotPaid() {
        #expect(!OrderStatus.expired.isPaid && !OrderStatus.manualReview.isPaid)
        #expect(OrderStatus.paid.isPaid && OrderStatus.completed.isPaid)
        #expect(OrderStatus.allCases.map(\.name) == ["awaiting_payment", "confirming", "paid", "completed", "expired", "manual_review"])
    }

    @Test("client signals are kept as the last signal and never move the status")
    func clientSignals() {
        let s = fold(no, recorded([registration(no), client(no, "banxaDidCompleteCheckout", at: at(5)), client(no, "banxaDidDismiss", at: at(3), id: "6f1c2a4e-3f1d-4c8a-9e2b-5d6f7a8b9c0e")]))
        #expect(s.status == .awaitingPayment && !s.paid)
        #expect(s.lastClientSignal?.callback == "banxaDidCompleteCheckout" && s.eventCount == 3)
    }

    @Test("a payment after an older expiry is a late payment")
    func latePayment() {
        let s = fold(no, recorded([observation(no, .expired, at: at(10)), observation(no, .paid, at: at(20))]))
        #expect(s.status == .paid && s.latePayment && !s.attention)
    }

    @Test("a paid amount that differs from the expected amount is an amount_mismatch; 40 equals 40.00")
    func amountCheck() {
        let ok = fold(no, recorded([registration(no, amount: "40.00"), observation(no, .paid, at: at(1), amount: "40")]))
        #expect(!ok.attention && ok.paidAmount == "40")
        let bad = fold(no, recorded([registration(no, amount: "40.00"), observation(no, .paid, at: at(1), amount: "39.999999999999999999")]))
        #expect(bad.attention && bad.conflicts.first?.kind == .amountMismatch)
        #expect(bad.conflicts.first?.expected == "40.00" && bad.conflicts.first?.observed == "39.999999999999999999")
        // Paid in an asset that is none of the order's: no rate is applied, a person looks,
        // and the paid amount (in the order's asset) is unknown.
        let otherAsset = fold(no, recorded([registration(no, amount: "40.00"), observation(no, .paid, at: at(1), amount: "0.01", asset: "ETH")]))
        #expect(otherAsset.attention && otherAsset.conflicts.first?.kind == .amountMismatch)
        #expect(otherAsset.conflicts.first?.observed == "0.01" && otherAsset.conflicts.first?.observedAsset == "ETH")
        #expect(otherAsset.conflicts.first?.expected == "40.00" && otherAsset.conflicts.first?.asset == "USDT")
        #expect(otherAsset.paidAmount == nil && otherAsset.status == .paid)
    }

    @Test("the paid amount is in the order's asset: Banxa's fiat amount for an order registered in euros, its crypto amount for one in the coin")
    func paidAmountInTheOrdersAsset() {
        func banxaPaid(_ position: Int) -> LedgerEvent {
            .observed(StatusObservation(merchantOrderNo: no, provider: "banxa", source: .webhook, status: .completed,
                                        observedAt: at(Int64(position)), amount: "0.01234", asset: "ETH",
                                        fiatAmount: "40.00", fiatCurrency: "EUR", idempotencyKey: "b\(position)"))
        }
        func registered(_ amount: String, _ asset: String) -> LedgerEvent {
            .registered(OrderRegistration(merchantOrderNo: no, provider: "banxa", amount: amount, asset: asset, registeredAt: at(0)))
        }
        let euros = fold(no, recorded([registered("40", "EUR"), banxaPaid(1)]))
        #expect(euros.paidAmount == "40.00" && euros.asset == "EUR" && !euros.attention)
        let coin = fold(no, recorded([registered("0.01234", "ETH"), banxaPaid(1)]))
        #expect(coin.paidAmount == "0.01234" && coin.asset == "ETH" && !coin.attention)
        let usdt = fold(no, recorded([registered("40", "USDT"), banxaPaid(1)]))
        #expect(usdt.paidAmount == nil && usdt.attention && usdt.conflicts.first?.observedAsset == "ETH")
        // A fiat amount without its currency is in no known unit: it hides nothing.
        let noCurrency = LedgerEvent.observed(StatusObservation(
            merchantOrderNo: no, provider: "banxa", source: .webhook, status: .paid, observedAt: at(2), amount: "0.01", asset: "ETH",
            fiatAmount: "40", fiatCurrency: nil, idempotencyKey: "nc"))
        let hidden = fold(no, recorded([registered("40", "USDT"), noCurrency]))
        #expect(hidden.attention && hidden.conflicts.first?.observedAsset == "ETH" && hidden.paidAmount == nil)
    }

    @Test("an app's relayed callback sets neither the provider nor the creation time of an order it reaches first")
    func clientEventsShapeNothing() {
        let relay = LedgerEvent.clientSignal(ClientSignal(merchantOrderNo: no, provider: "banxa", callback: "banxaDidCompleteCheckout",
                                                          payload: .object([]), clientEventId: "c1", occurredAt: Timestamp(microseconds: 0),
                                                          receivedAt: at(9)))
        let s = fold(no, recorded([relay, observation(no, .paid, at: at(5))]))
        #expect(s.provider == "web3" && s.createdAt == at(5), "\(String(describing: s.provider)) \(String(describing: s.createdAt))")
        #expect(s.status == .paid)
        let refund = LedgerEvent.adjustment(Adjustment(merchantOrderNo: no, provider: "banxa", source: .client, kind: "refund",
                                                       amount: "40", asset: "EUR", observedAt: at(9), idempotencyKey: "r1"))
        #expect(!fold(no, recorded([observation(no, .paid, at: at(5)), refund])).refunded, "a client cannot record a refund")
    }

    @Test("of several refunds the order shows the newest by provider time, ties by position, in any arrival order (a redelivered refund is not counted twice)")
    func newestRefund() {
        let paid = observation(no, .completed, at: at(1))
        let events = recorded([paid, refund(no, amount: "10", at: at(20)), refund(no, amount: "30", at: at(50)), refund(no, amount: "25", at: at(50)),
                               refund(no, amount: "5", at: at(30))])
        var rng = SplitMix64(seed: 0x5EED_00EF)
        for _ in 0..<200 {
            let s = fold(no, events.shuffled(using: &rng))
            // 30 and 25 share the newest time: 25 came later in the ledger (position 4).
            #expect(s.refunded && s.refundAmount == "25" && s.refundedAt == at(50) && s.status == .completed)
        }
    }

    @Test("a refund keeps the order paid and records amount and time")
    func refunds() {
        let s = fold(no, recorded([observation(no, .completed, at: at(1)), refund(no, amount: "40.00", at: at(50))]))
        #expect(s.status == .completed && s.paid && s.refunded && s.refundAmount == "40.00" && s.refundedAt == at(50))
    }

    @Test("applying the same position twice changes nothing, and other streams are ignored")
    func duplicatesAreInert() {
        let events = recorded([registration(no), observation(no, .paid, at: at(1))])
        let once = fold(no, events)
        #expect(fold(no, events + events) == once)
        let other = RecordedEvent(event: observation(orderNo("SO-2"), .expired, at: at(9)), position: 99, recordedAt: at(2000))
        #expect(OrderState.reduce(once, other) == once)
    }

    @Test("an unregistered order appears with what its webhooks say")
    func unregistered() {
        let s = fold(no, recorded([observation(no, .paid, at: at(7), amount: "1.5")]))
        #expect(s.status == .paid && s.provider == "web3" && s.expectedAmount == nil && s.paidAmount == "1.5" && s.createdAt == at(7))
    }

    @Test("statusAfter gives the status after each event in ledger order")
    func statusAfter() {
        let events = recorded([registration(no), observation(no, .confirming, at: at(1)), client(no, "x", at: at(2)),
                               observation(no, .paid, at: at(3)), observation(no, .expired, at: at(4))])
        let timeline = Lifecycle.statusAfter(no, events.reversed())
        #expect(timeline.map(\.status) == [.awaitingPayment, .confirming, .confirming, .paid, .paid])
        #expect(timeline.map(\.position) == [1, 2, 3, 4, 5])
        let asOf = Lifecycle.state(no, events, asOf: Timestamp(seconds: t0.seconds + 1001))
        #expect(asOf.status == .confirming && asOf.eventCount == 2)
    }

    @Test("the read model has the http-api.md field names")
    func readModel() throws {
        let s = fold(no, recorded([registration(no), observation(no, .paid, at: at(1), amount: "40.00")]))
        let json = s.toJSON()
        let names = json.objectFields!.map(\.0)
        for field in ["merchantOrderNo", "provider", "status", "statusName", "paid", "attention", "latePayment", "refunded",
                      "expectedAmount", "paidAmount", "asset", "providerOrderId", "txHash", "createdAt", "updatedAt", "paidAt",
                      "lastClientSignal", "conflicts", "eventCount", "lastPosition"] {
            #expect(names.contains(field), "\(field)")
        }
        #expect(json["status"] == .number("3") && json["statusName"] == .string("paid") && json["paid"] == .bool(true))
        #expect(json["paidAt"] == .string(at(1).rfc3339) && json["lastPosition"] == .number("2"))
    }

    @Test("every event round-trips through its type and payload, also after JSON text")
    func eventRoundTrip() throws {
        let events: [LedgerEvent] = [
            .registered(OrderRegistration(merchantOrderNo: no, provider: "web3", amount: "40.00", asset: "USDT", chainId: "2",
                                          tokenId: "1", fiatCurrency: "EUR", fiatAmount: "37.5", externalCustomerId: "c@x.io",
                                          providerOrderId: "P1", providerResponse: .object([("code", .number("0"))]),
                                          registeredAt: Timestamp(microseconds: 1_764_417_600_123_456))),
            .observed(StatusObservation(merchantOrderNo: no, provider: "x", source: .operator, status: .expired,
                                        providerStatus: "correction", observedAt: at(3), actor: "alice", reason: "double",
                                        idempotencyKey: "operator:1")),
            observation(no, .paid, at: at(1), amount: "40.00", asset: "USDT"),
            client(no, "banxaDidFail", at: at(2)),
            refund(no, at: at(9)),
            .enrollment(EnrollmentSignal(enrollmentRef: "E-1", provider: "bankpay", callback: "close", payload: .object([]),
                                         clientEventId: "6f1c2a4e-3f1d-4c8a-9e2b-5d6f7a8b9c0d", receivedAt: at(4))),
        ]
        for e in events {
            let back = storedRoundTrip(e)
            #expect(back == e, "\(e.type)")
            #expect(back?.idempotencyKey == e.idempotencyKey && back?.observedAt == e.observedAt && back?.source == e.source)
        }
        #expect(coreError { try LedgerEvent(type: "Nope", payload: .object([]), observedAt: t0) }?.reason == "invalid_event")
        #expect(coreError { try LedgerEvent(type: "StatusObserved", payload: .object([]), observedAt: t0) }?.reason == "invalid_event")
    }

    @Test("an operator correction parses with actor and reason and is authoritative")
    func correction() throws {
        let o = try OrderRequests.correction(merchantOrderNo: no, body: bytes(#"{"status":5,"reason":"customer cancelled by phone"}"#),
                                             actor: "auditor-alice", uniqueId: "req-1", receivedAt: t0)
        #expect(o.source == .operator && o.status == .expired && o.actor == "auditor-alice" && o.idempotencyKey == "operator:order-SO-1:req-1")
        #expect(coreError { try OrderRequests.correction(merchantOrderNo: no, body: bytes(#"{"status":9,"reason":"x"}"#), actor: "a", uniqueId: "r", receivedAt: t0) } == .statusOutOfRange("9"))
        #expect(coreError { try OrderRequests.correction(merchantOrderNo: no, body: bytes(#"{"status":3}"#), actor: "a", uniqueId: "r", receivedAt: t0) } == .missingField("reason"))
    }

    @Test("a correction without an id is keyed by its content and the order's newest event: the same content is a replay only of itself")
    func correctionContentKey() throws {
        func correction(_ body: String, actor: String = "alice", id: String? = nil, after position: Int64 = 7) throws -> StatusObservation {
            try OrderRequests.correction(merchantOrderNo: no, body: bytes(body), actor: actor, uniqueId: id,
                                         newestPosition: position, receivedAt: t0)
        }
        let fix = #"{"status":5,"reason":"cancelled by phone"}"#
        let first = try correction(fix)
        #expect(first.idempotencyKey.hasPrefix("operator:order-SO-1:after:7:"))
        #expect(CorrectionKey.isReplay(storedKey: first.idempotencyKey, of: try correction(fix, after: 8), currentStatus: .expired),
                "sent again once it is the newest event (at 8)")
        #expect(!CorrectionKey.isReplay(storedKey: first.idempotencyKey, of: try correction(fix, after: 8), currentStatus: .confirming),
                "the order shows another status (a later report outranked it): sending it again is a new event")
        #expect(CorrectionKey.isReplay(storedKey: first.idempotencyKey, of: try correction(fix, after: 8), currentStatus: .paid),
                "a paid order never moves back: the same correction again changes nothing")
        #expect(try correction(fix).idempotencyKey == first.idempotencyKey, "two copies racing share one key")
        #expect(try correction(fix, after: 9).idempotencyKey != first.idempotencyKey, "after other events it is a new decision")
        for other in [#"{"status":6,"reason":"cancelled by phone"}"#, #"{"status":5,"reason":"cancelled by mail"}"#,
                      #"{"status":5,"reason":"cancelled by phone","provider":"web3"}"#] {
            #expect(!CorrectionKey.isReplay(storedKey: first.idempotencyKey, of: try correction(other), currentStatus: .expired), "\(other)")
        }
        #expect(!CorrectionKey.isReplay(storedKey: first.idempotencyKey, of: try correction(fix, actor: "bob"), currentStatus: .expired))
        #expect(!CorrectionKey.isReplay(storedKey: first.idempotencyKey, of: try correction(fix, id: "retry-1"), currentStatus: .expired),
                "an explicit key decides alone")
        let withId = try correction(#"{"status":5,"reason":"cancelled by phone","correctionId":"0B7C2A4E-3F1D-4C8A-9E2B-5D6F7A8B9C0D"}"#)
        #expect(withId.idempotencyKey == "operator:order-SO-1:0b7c2a4e-3f1d-4c8a-9e2b-5d6f7a8b9c0d")
        #expect(!CorrectionKey.isReplay(storedKey: first.idempotencyKey, of: withId, currentStatus: .expired))
        #expect(!CorrectionKey.isReplay(storedKey: withId.idempotencyKey, of: first, currentStatus: .expired), "a stored correction with an id is not content-keyed")
        // Contents that a joined text would blur stay apart.
        let a = try correction(#"{"status":5,"reason":"a:b"}"#, actor: "x")
        let b = try correction(#"{"status":5,"reason":"b"}"#, actor: "x:a")
        let c = try correction(#"{"status":5,"reason":"1:ab"}"#, actor: "x")
        #expect(Set([a.idempotencyKey, b.idempotencyKey, c.idempotencyKey]).count == 3)
    }
}
