/// Micro-benchmarks of the core, called by `ledger-bench` (run them in release mode).
public enum CoreBenchmarks {
    /// Folds `events` events (orders of 8 events each: a registration, webhooks
    /// 1-2-3-4, a query, a client signal and one redelivery) and returns events per second.
    public static func reducerEventsPerSecond(events: Int) -> Double {
        let perOrder = 8
        let orders = max(1, events / perOrder)
        var batches: [(MerchantOrderNo, [RecordedEvent])] = []
        batches.reserveCapacity(orders)
        var position: Int64 = 0
        let base = Timestamp(seconds: 1_790_000_000)
        for n in 0..<orders {
            guard let no = try? MerchantOrderNo("bench-\(n)") else { continue }
            var list: [RecordedEvent] = []
            func add(_ e: LedgerEvent) {
                position += 1
                list.append(RecordedEvent(event: e, position: position, recordedAt: Timestamp(microseconds: base.microseconds + position)))
            }
            add(.registered(OrderRegistration(merchantOrderNo: no, provider: "web3", amount: "40.00", asset: "USDT", registeredAt: base)))
            for (k, s) in [OrderStatus.awaitingPayment, .confirming, .paid, .completed].enumerated() {
                add(.observed(StatusObservation(merchantOrderNo: no, provider: "web3", source: .webhook, status: s,
                                                providerStatus: String(s.rawValue), observedAt: Timestamp(seconds: base.seconds + Int64(k)),
                                                amount: "40.0", txHash: s.isPaid ? "0xabc" : nil, idempotencyKey: "web3:\(n):\(k)")))
            }
            add(.observed(StatusObservation(merchantOrderNo: no, provider: "web3", source: .query, status: .completed,
                                            observedAt: Timestamp(seconds: base.seconds + 9), idempotencyKey: "q:\(n)")))
            add(.clientSignal(ClientSignal(merchantOrderNo: no, provider: "web3", callback: "paid", payload: .object([]),
                                           clientEventId: "00000000-0000-0000-0000-000000000000", receivedAt: base)))
            list.append(list[3])  // a redelivery of an already applied position
            batches.append((no, list))
        }
        let total = batches.reduce(0) { $0 + $1.1.count }
        let clock = ContinuousClock()
        var paidCount = 0
        let elapsed = clock.measure {
            for (no, list) in batches {
                var state = OrderState(merchantOrderNo: no)
                for e in list { OrderState.reduce(into: &state, e) }
                if state.paid { paidCount += 1 }
            }
        }
        precondition(paidCount == batches.count, "benchmark orders must all end paid")
        return Double(total) / seconds(elapsed)
    }

    /// Verifies and maps a typical signed web3 webhook `iterations` times; returns µs per webhook.
    public static func web3WebhookMicroseconds(iterations: Int) -> Double {
        let key = "sk_live_4f2a9c0e1b7d4e6f8a3b5c7d9e1f2a3b"
        let body = Array(#"{"merchantOrderNo":"SO-2026-000123","orderNo":"P202611290001","status":3,"statusText":"PAID","txHash":"0x5c504ed432cb51138bcf09aa5e8a410dd4a1e204ef84bfed1be16dfba1b22060","payAmountMinimal":"40000000","payAmountDisplay":"40.00","amount":"40.00","chainKey":"tron","chainId":2,"tokenId":1}"#.utf8)
        let now = Timestamp(seconds: 1_790_000_000)
        let ts = String(now.seconds)
        let headers = ["x-pay-timestamp": ts, "x-pay-signature": Web3Webhook.signature(key: key, timestamp: ts, body: body)]
        let keys = ["sk_old_rotated_key_0000000000000000", key]
        let n = max(1, iterations)
        let clock = ContinuousClock()
        var ok = 0
        let elapsed = clock.measure {
            for _ in 0..<n {
                if let (_, event) = try? Web3Webhook.ingest(headers: headers, body: body, keys: keys, now: now),
                   case .observed(let o) = event, o.status == .paid { ok += 1 }
            }
        }
        precondition(ok == n, "the benchmark webhook must verify")
        return seconds(elapsed) * 1_000_000 / Double(n)
    }

    private static func seconds(_ d: Duration) -> Double {
        let (s, atto) = d.components
        return max(1e-9, Double(s) + Double(atto) / 1e18)
    }
}
