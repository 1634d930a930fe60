/// The jsonb text (`JSONBText`) of a status observation's payload, written
/// straight from its fields: every webhook and query result is one, and building
/// the `JSONValue` tree (`LedgerEvent.payload`) only to walk, order and print it
/// again cost each webhook a few microseconds. Equal, byte for byte, to
/// `JSONBText.bytes(.observed(e).payload)`: a property test checks it on
/// thousands of generated observations (ObservationPayloadTextTests).
extension JSONBText {
    /// Nil for a payload jsonb would refuse (a number beyond numeric's range in `body`).
    public static func observationPayload(_ e: StatusObservation) -> [UInt8]? {
        var out = [UInt8]()
        out.reserveCapacity(512 + (e.body == nil ? 0 : 512))
        var first = true
        func key(_ name: StaticString) {
            out.append(first ? UInt8(ascii: "{") : UInt8(ascii: ","))
            if !first { out.append(UInt8(ascii: " ")) }
            first = false
            out.append(UInt8(ascii: "\""))
            name.withUTF8Buffer { out.append(contentsOf: $0) }
            out.append(contentsOf: [UInt8(ascii: "\""), UInt8(ascii: ":"), UInt8(ascii: " ")])
        }
        func string(_ name: StaticString, _ value: String?) {
            guard let value else { return }
            key(name)
            writeString(value, to: &out)
        }
        // jsonb's key order: shorter first, then bytewise. (The names are constants: their
        // order is fixed here once, and the property test holds it to `keyOrder`.)
        if let body = e.body {
            key("body")
            guard write(body, to: &out) else { return nil }
        }
        string("actor", e.actor)
        string("asset", e.asset)
        string("amount", e.amount)
        string("reason", e.reason)
        string("source", e.source.rawValue)
        key("status")
        out.append(contentsOf: String(e.status.rawValue).utf8)
        string("txHash", e.txHash)
        string("provider", e.provider)
        string("fiatAmount", e.fiatAmount)
        string("statusName", e.status.name)
        string("fiatCurrency", e.fiatCurrency)
        string("idempotencyKey", e.idempotencyKey)
        string("providerStatus", e.providerStatus)
        string("merchantOrderNo", e.merchantOrderNo.value)
        string("providerOrderId", e.providerOrderId)
        out.append(UInt8(ascii: "}"))
        return out
    }

    /// The jsonb text of any event's payload: observations written directly, the rest
    /// through their tree.
    public static func payload(_ event: LedgerEvent) -> [UInt8]? {
        if case .observed(let e) = event { return observationPayload(e) }
        return bytes(event.payload)
    }
}
