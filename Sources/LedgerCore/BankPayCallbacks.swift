/// The BankPay ACH SDK's callback dictionaries, as an app relays them (seed 003).
///
/// The callback name is one of `bankAccountAdded` (enrollment flow only),
/// `acceptedTransactionIntentServiceFee` (transaction flow only), `close`, or
/// `error`; `onSuccess` is also accepted and resolved by the dictionary's
/// `type`, and `onError` / `enrollmentError` mean `error`. The payload is the
/// dictionary as the SDK passed it, kept whole after its shape is checked.
public enum BankPayCallbacks {
    public static let provider = "bankpay"
    public static let bankAccountAdded = "bankAccountAdded"
    public static let acceptedServiceFee = "acceptedTransactionIntentServiceFee"
    public static let close = "close"
    public static let error = "error"

    /// Which SDK flow a callback came from: enrollment callbacks belong to enrollment streams.
    public enum Flow: Sendable { case enrollment, transaction }

    /// Returns the canonical callback name and the checked payload.
    public static func normalize(callback: String, payload: JSONValue?, flow: Flow) throws(CoreError) -> (callback: String, payload: JSONValue) {
        let p = (payload == nil || payload!.isNull) ? JSONValue.object([]) : payload!
        let f = try FieldReader(p, what: "BankPay callback dictionary")
        let type = try f.optionalString("type", maxLength: 128)
        var name = callback
        switch callback {
        case "onSuccess":
            guard let type else { throw .callbackPayloadMismatch("onSuccess needs the dictionary's \"type\"") }
            name = type == "enrollmentError" ? error : type
        case "onError", "enrollmentError":
            name = error
        default:
            break
        }
        switch name {
        case bankAccountAdded:
            guard flow == .enrollment else { throw .unknownCallback(provider: provider, callback: name) }
            try expectType(type, name)
            guard case .object? = f.value("data"), let id = try FieldReader(f.value("data")!, what: "data").optionalText("intent_id") else {
                throw .callbackPayloadMismatch("bankAccountAdded needs data.intent_id")
            }
            _ = id
        case acceptedServiceFee:
            guard flow == .transaction else { throw .unknownCallback(provider: provider, callback: name) }
            try expectType(type, name)
            guard case .object? = f.value("data"),
                  try FieldReader(f.value("data")!, what: "data").optionalText("transactionIntentId") != nil else {
                throw .callbackPayloadMismatch("acceptedTransactionIntentServiceFee needs data.transactionIntentId")
            }
        case close:
            try expectType(type, name)
        case error:
            // Two shapes: providers.md's top-level {error, message, errors}, and the
            // seed's {type: "enrollmentError", data: {error, message}}. A top-level code is
            // read first, whatever the type says (as the enrollment's fold reads it).
            var source = f
            if type == "enrollmentError", !f.has("error") {
                guard let data = f.value("data"), case .object = data else {
                    throw .callbackPayloadMismatch("an enrollmentError dictionary needs an \"error\" code, at its top or in \"data\"")
                }
                source = try FieldReader(data, what: "data")
            } else if let type, type != error, type != "enrollmentError" {
                throw .callbackPayloadMismatch("the dictionary's type \(CoreError.quote(type)) is not an error")
            }
            guard try source.optionalString("error", maxLength: 256) != nil else {
                throw .callbackPayloadMismatch("an error callback needs an \"error\" code such as \"declined\"")
            }
            _ = try source.optionalString("message", maxLength: 4096)
            if let errors = f.value("errors"), case .object = errors {} else if f.has("errors") {
                throw .callbackPayloadMismatch("\"errors\" must be an object")
            }
        default:
            throw .unknownCallback(provider: provider, callback: callback)
        }
        return (name, p)
    }

    private static func expectType(_ type: String?, _ name: String) throws(CoreError) {
        if let type, type != name { throw .callbackPayloadMismatch("the dictionary's type \(CoreError.quote(type)) is not \(name)") }
    }
}
