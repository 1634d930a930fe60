import Testing
import LedgerCore

// Builders for the orders, events and times the core's suites share, valid by construction.

extension Array where Element == UInt8 {
    init(_ s: StaticString) { self = Array(String(describing: s).utf8) }
}

func bytes(_ s: String) -> [UInt8] { Array(s.utf8) }

func orderNo(_ s: String) -> MerchantOrderNo {
    // Test fixtures are valid by construction.
    try! MerchantOrderNo(s)
}

let t0 = Timestamp(seconds: 1_764_417_600)  // 2025-11-29T12:00:00Z

func at(_ seconds: Int64) -> Timestamp { Timestamp(seconds: t0.seconds + seconds) }

func observation(_ no: MerchantOrderNo, _ status: OrderStatus, at time: Timestamp, source: EventSource = .webhook,
                 amount: String? = nil, asset: String? = nil, key: String = "k") -> LedgerEvent {
    .observed(StatusObservation(merchantOrderNo: no, provider: "web3", source: source, status: status,
                                providerStatus: String(status.rawValue), observedAt: time, amount: amount, asset: asset,
                                idempotencyKey: key))
}

func registration(_ no: MerchantOrderNo, amount: String = "40.00", asset: String = "USDT", at time: Timestamp = t0) -> LedgerEvent {
    .registered(OrderRegistration(merchantOrderNo: no, provider: "web3", amount: amount, asset: asset, registeredAt: time))
}

func client(_ no: MerchantOrderNo, _ callback: String, at time: Timestamp, id: String = "6f1c2a4e-3f1d-4c8a-9e2b-5d6f7a8b9c0d") -> LedgerEvent {
    .clientSignal(ClientSignal(merchantOrderNo: no, provider: "banxa", callback: callback, payload: .object([]),
                               clientEventId: id, occurredAt: time, receivedAt: time))
}

func refund(_ no: MerchantOrderNo, amount: String = "40", at time: Timestamp) -> LedgerEvent {
    .adjustment(Adjustment(merchantOrderNo: no, provider: "banxa", source: .webhook, amount: amount, asset: "EUR",
                           providerStatus: "refunded", observedAt: time, idempotencyKey: "r"))
}

func recorded(_ events: [LedgerEvent]) -> [RecordedEvent] {
    events.enumerated().map { RecordedEvent(event: $1, position: Int64($0 + 1), recordedAt: Timestamp(seconds: t0.seconds + 1000 + Int64($0))) }
}

func fold(_ no: MerchantOrderNo, _ events: [RecordedEvent]) -> OrderState {
    OrderState.replay(no, events)
}
