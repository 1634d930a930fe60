import Testing
import LedgerCore

/// SplitMix64: a tiny seeded generator, so every property run is reproducible.
struct SplitMix64: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

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

/// Runs a throwing call and returns its error as a CoreError (nil when it succeeded).
/// Any other error type is a test failure: the core must only throw CoreError.
func coreError<T>(_ body: () throws -> T) -> CoreError? {
    do {
        _ = try body()
        return nil
    } catch let error as CoreError {
        return error
    } catch {
        Issue.record("unexpected error type: \(error)")
        return nil
    }
}

/// Stores an event the way the ledger does (type, payload and metadata as JSON
/// text, observed_at as a column) and reads it back.
func storedRoundTrip(_ e: LedgerEvent) -> LedgerEvent? {
    guard let payload = try? JSONValue.parse(e.payload.serializedBytes),
          let metadata = try? JSONValue.parse(e.metadata.serializedBytes) else { return nil }
    return try? LedgerEvent(type: e.type, payload: payload, observedAt: e.observedAt, metadata: metadata)
}
