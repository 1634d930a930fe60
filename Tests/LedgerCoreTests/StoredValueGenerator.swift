import LedgerCore

/// Random event histories of one order, every field drawn from values a provider or
/// client could really send, the awkward ones included (quotes, escapes, control
/// characters, non-ASCII, empty strings), for round trips through storage.
struct StoredValueGenerator {
    var rng: SplitMix64

    private static let pieces = ["a", "Z", "0", "9", "-", "_", ".", ":", " ", "\"", "\\", "/", "\n", "\t", "\u{1}", "é", "€", "😀", "ǅ", "\u{7f}"]
    private static let orderCharacters = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_:.")
    private static let amounts = ["40", "40.00", "0.000000000000000001", "-1", "1e3", "", "12345678901234567890.12345678"]
    private static let callbacks = ["banxaDidDismiss", "banxaDidFail", "banxaDidCompleteCheckout", "onError", "x"]

    private mutating func chance(_ oneIn: Int) -> Bool { Int.random(in: 0..<oneIn, using: &rng) == 0 }

    mutating func text(maxLength: Int = 12) -> String {
        String((0..<Int.random(in: 0...maxLength, using: &rng)).map { _ in Self.pieces.randomElement(using: &rng)! }.joined())
    }

    private mutating func optionalText() -> String? { chance(3) ? nil : text() }

    private mutating func time() -> Timestamp {
        Timestamp(microseconds: t0.microseconds + Int64.random(in: -86_400_000_000...86_400_000_000, using: &rng))
    }

    /// JSON of a few levels, as provider bodies and client payloads are.
    mutating func json(depth: Int = 2) -> JSONValue {
        switch Int.random(in: 0..<(depth > 0 ? 7 : 5), using: &rng) {
        case 0: return .null
        case 1: return .bool(Bool.random(using: &rng))
        case 2: return .integer(Int.random(in: -1_000_000...1_000_000, using: &rng))
        case 3: return .string(text())
        case 4: return .string(Self.amounts.randomElement(using: &rng)!)
        case 5: return .array((0..<Int.random(in: 0...3, using: &rng)).map { _ in json(depth: depth - 1) })
        default:
            var keys = Set<String>()
            var fields: [(String, JSONValue)] = []
            for _ in 0..<Int.random(in: 0...3, using: &rng) {
                let key = text(maxLength: 6)
                if keys.insert(key).inserted { fields.append((key, json(depth: depth - 1))) }
            }
            return .object(fields)
        }
    }

    mutating func orderNumber() -> MerchantOrderNo {
        let length = Int.random(in: 1...24, using: &rng)
        var value = String((0..<length).map { _ in Self.orderCharacters.randomElement(using: &rng)! })
        if value == "." || value == ".." { value = "O" + value }
        return orderNo(value)
    }

    mutating func event(_ no: MerchantOrderNo) -> LedgerEvent {
        let provider = ["web3", "banxa", "bankpay", "acme-pay"].randomElement(using: &rng)!
        switch Int.random(in: 0..<4, using: &rng) {
        case 0:
            return .registered(OrderRegistration(
                merchantOrderNo: no, provider: provider, amount: Self.amounts.randomElement(using: &rng)!, asset: text(maxLength: 5),
                chainId: optionalText(), tokenId: optionalText(), fiatCurrency: optionalText(), fiatAmount: optionalText(),
                externalCustomerId: optionalText(), providerOrderId: optionalText(), providerResponse: chance(2) ? json() : nil,
                registeredAt: time()))
        case 1:
            let source = [EventSource.webhook, .query, .operator].randomElement(using: &rng)!
            return .observed(StatusObservation(
                merchantOrderNo: no, provider: provider, source: source, status: OrderStatus.allCases.randomElement(using: &rng)!,
                providerStatus: optionalText(), observedAt: time(), amount: optionalText(), asset: optionalText(),
                fiatAmount: optionalText(), fiatCurrency: optionalText(), txHash: optionalText(), providerOrderId: optionalText(),
                actor: source == .operator ? text() : nil, reason: source == .operator ? optionalText() : nil,
                keyId: source == .webhook ? optionalText() : nil, leftOut: chance(4) ? json() : nil, body: chance(2) ? json() : nil,
                idempotencyKey: provider + ":" + text()))
        case 2:
            return .clientSignal(ClientSignal(
                merchantOrderNo: no, provider: provider, callback: Self.callbacks.randomElement(using: &rng)!, payload: json(),
                clientEventId: text(), occurredAt: chance(2) ? time() : nil, receivedAt: time(), sdkVersion: optionalText()))
        default:
            return .adjustment(Adjustment(
                merchantOrderNo: no, provider: provider, source: [EventSource.webhook, .query].randomElement(using: &rng)!,
                kind: chance(4) ? text() : "refund", amount: optionalText(), asset: optionalText(), providerStatus: optionalText(),
                observedAt: time(), providerOrderId: optionalText(), keyId: optionalText(), leftOut: chance(4) ? json() : nil,
                body: chance(2) ? json() : nil, idempotencyKey: provider + ":" + text()))
        }
    }

    /// An order and 1 to 8 of its events, in the order they would be recorded.
    mutating func history() -> (MerchantOrderNo, [LedgerEvent]) {
        let no = orderNumber()
        return (no, (0..<Int.random(in: 1...8, using: &rng)).map { _ in event(no) })
    }
}
