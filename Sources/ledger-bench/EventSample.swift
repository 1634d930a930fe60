import LedgerCore
import LedgerPostgres

/// Event-sized rows, shared by every phase so the ledger and pgbench write
/// rows of the same width: a web3 webhook body (~350 bytes, the shape of
/// seed 002) as the raw bytes, the StatusObserved payload the service derives
/// from it (its mapped fields), metadata, a 69-character idempotency key and a
/// 32-byte hash.
enum EventSample {
    /// A signed-webhook body for order `order`; `tag` (hex) makes the txHash unique.
    static func web3Body(order: String, tag: String, status: Int = 2) -> String {
        web3Body(order: order, orderNo: "P" + tag.prefix(24), txHash: "0x" + txHex(tag), status: status)
    }

    static func web3Body(order: String, orderNo: String, txHash: String, status: Int = 2) -> String {
        let statusText = status == 2 ? "confirming" : status == 3 ? "paid" : "awaiting"
        return #"{"merchantOrderNo":"\#(order)","orderNo":"\#(orderNo)","status":\#(status),"statusText":"\#(statusText)","#
            + #""txHash":"\#(txHash)","payAddress":"0x8f3a2b1c4d5e6f708192a3b4c5d6e7f809a1b2c3","#
            + #""payAmountMinimal":"40000000","payAmountDisplay":"40.00","amount":"40.00","tokenSymbol":"USDT","#
            + #""chainKey":"eth","chainId":1,"tokenId":1}"#
    }

    /// 64 hex digits: `tag` padded with a fixed tail.
    static func txHex(_ tag: String) -> String {
        let tail = "5c504ed432cb51138bcf09aa5e8a410dd4a1e204ef84bfed1be16dfba1b22060"
        return String((tag + tail).prefix(64))
    }

    /// The StatusObserved payload, field for field as LedgerCore's EventCoding
    /// writes it for a web3 webhook (checked against the core by `payloadWidths`),
    /// rendered as the service renders it: in jsonb's form (JSONBText).
    static func payload(order: String, tag: String, key: String) -> String {
        let value: JSONValue = .object([
            ("merchantOrderNo", .string(order)), ("provider", .string("web3")), ("source", .string("webhook")),
            ("status", .integer(2)), ("statusName", .string("confirming")), ("providerStatus", .string("2")),
            ("amount", .string("40.00")), ("asset", .string("USDT")), ("txHash", .string("0x" + txHex(tag))),
            ("providerOrderId", .string("P" + tag.prefix(24))), ("idempotencyKey", .string(key)),
        ])
        return JSONBText.string(value) ?? JSONSerializer.string(value)
    }

    static func metadata(requestID: String) -> String {
        JSONBText.string(.object([("requestId", .string(requestID)), ("verified", .bool(true)),
                                  ("keyId", .string("k1:3f2a9c0e"))])) ?? "{}"
    }

    /// A new, unique event of order `A-<run>-<thread>-<n/4>` (four events a stream).
    /// Built from templates rendered once, so the load generator stays cheap
    /// (pgbench builds its rows on the server); `payloadMatchesRenderer`
    /// checks the template against `payload(...)`.
    static func newEvent(run: String, thread: Int, n: Int) -> NewEvent {
        let order = "A-\(run)-\(thread)-\(n / 4)"
        let tag = run + hex(UInt64(thread), width: 4) + hex(UInt64(n), width: 12)
        let body = web3Body(order: order, tag: tag)
        let bytes = Array(body.utf8)
        let key = "web3:" + Hex.encode(Crypto.sha256(bytes))
        let payloadText = payloadTemplate.fill([order, "P" + tag.prefix(24), "0x" + txHex(tag), key])
        return NewEvent(stream: "order-" + order, type: EventType.statusObserved, source: "webhook",
                        payloadJSON: payloadText, raw: bytes,
                        metadataJSON: metadataTemplate.fill(["bench-\(run)-\(thread)-\(n)"]),
                        idempotencyKey: key, observedAt: Timestamp.now())
    }

    /// The payload's text with its four variable values as slots.
    static let payloadTemplate = TextTemplate(
        payload(order: "@0@", tag: "", key: "@3@"),
        replacing: { text in
            // `payload` derives the order number and tx hash from the tag; with an empty tag they are fixed strings.
            text.replacingOccurrences(of: "\"P\"", with: "\"@1@\"").replacingOccurrences(of: "\"0x\(txHex(""))\"", with: "\"@2@\"")
        }, slots: 4)

    static let metadataTemplate = TextTemplate(metadata(requestID: "@0@"), replacing: { $0 }, slots: 1)

    /// Whether the template renders exactly what `payload(...)` renders.
    static func payloadMatchesRenderer() -> Bool {
        let order = "A-00000000-1-0", tag = "0000000000010000000000001"
        let body = web3Body(order: order, tag: tag)
        let key = "web3:" + Hex.encode(Crypto.sha256(Array(body.utf8)))
        return payloadTemplate.fill([order, "P" + tag.prefix(24), "0x" + txHex(tag), key])
            == payload(order: order, tag: tag, key: key)
    }

    /// (template payload bytes, core payload bytes) for the same body: the
    /// template must stay as wide as what the service really stores.
    static func payloadWidths() -> (template: Int, core: Int) {
        let event = newEvent(run: "00000000", thread: 1, n: 1)
        let verification = WebhookVerification(keyIndex: 0, keyId: "k1:3f2a9c0e", signedAt: Timestamp.now())
        let core = (try? Web3Webhook.observation(body: event.raw ?? [], verification: verification))
            .map { (JSONBText.string(LedgerEvent.observed($0).payload) ?? "").utf8.count } ?? 0
        return (event.payloadJSON.utf8.count, core)
    }

    /// The read-model state (jsonb `state` of ledger.orders) after one webhook, from the core.
    static func orderStateJSON() -> String {
        let body = Array(web3Body(order: "B-bench-1", tag: "00000000000000000001").utf8)
        let verification = WebhookVerification(keyIndex: 0, keyId: "k1:3f2a9c0e", signedAt: Timestamp.now())
        guard let observation = try? Web3Webhook.observation(body: body, verification: verification) else { return "{}" }
        var state = OrderState(merchantOrderNo: observation.merchantOrderNo)
        OrderState.reduce(into: &state, RecordedEvent(event: .observed(observation), position: 1, recordedAt: Timestamp.now()))
        return JSONSerializer.string(state.storageJSON())
    }

    static func hex(_ value: UInt64, width: Int) -> String {
        let digits = String(value, radix: 16)
        return digits.count >= width ? digits : String(repeating: "0", count: width - digits.count) + digits
    }
}

/// Text with numbered slots `@0@`, `@1@`...: split once, filled by concatenation.
struct TextTemplate: Sendable {
    private var pieces: [String] = []
    private var slotOrder: [Int] = []

    init(_ rendered: String, replacing adjust: (String) -> String, slots: Int) {
        var rest = Substring(adjust(rendered))
        var piece = ""
        while !rest.isEmpty {
            if rest.first == "@", let slot = (0..<slots).first(where: { rest.hasPrefix("@\($0)@") }) {
                pieces.append(piece)
                piece = ""
                slotOrder.append(slot)
                rest = rest.dropFirst("@\(slot)@".count)
            } else {
                piece.append(rest.removeFirst())
            }
        }
        pieces.append(piece)
    }

    func fill(_ values: [String]) -> String {
        var out = pieces[0]
        for (n, slot) in slotOrder.enumerated() {
            out += values[slot]
            out += pieces[n + 1]
        }
        return out
    }
}
