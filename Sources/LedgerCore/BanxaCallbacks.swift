/// The Banxa iOS SDK's delegate callbacks, as an app relays them (seed 000).
///
/// Payload shapes (JSON objects):
/// - `banxaDidCompleteCheckout`: BanxaCheckoutResult `{paymentId?, orderId?, status?, rawQuery?}`, strings;
/// - `banxaDidFail`: the APIError case as `{"error": CASE, ...}` (see `BanxaAPIError`);
/// - `banxaDidDismiss`: `{}` (no data).
///
/// The fields named there are checked; every other member the app sent (an error's
/// `localizedDescription`, the customer's `email`, a screen name) is kept in the payload
/// as sent, as webhooks keep unknown fields: the payload is what the app reported, and
/// the read paths mask e-mail addresses in it for everyone but auditors.
public enum BanxaCallbacks {
    public static let completeCheckout = "banxaDidCompleteCheckout"
    public static let fail = "banxaDidFail"
    public static let dismiss = "banxaDidDismiss"
    public static let names = [completeCheckout, fail, dismiss]

    /// Validates a callback's payload and returns it whole: the checked fields as sent, and
    /// the ones the SDK does not name beside them (a missing or null payload is `{}`).
    public static func normalize(callback: String, payload: JSONValue?) throws(CoreError) -> JSONValue {
        switch callback {
        case completeCheckout:
            let p = payload ?? .object([])
            let f = try FieldReader(p, what: "BanxaCheckoutResult")
            for key in ["paymentId", "orderId", "status", "rawQuery"] {
                guard let v = f.value(key) else { continue }
                guard case .string = v else { throw .callbackPayloadMismatch("BanxaCheckoutResult.\(key) must be a string") }
                _ = try f.optionalString(key, maxLength: 4096)
            }
            return p
        case fail:
            guard let payload, !payload.isNull else {
                throw .callbackPayloadMismatch("banxaDidFail needs the error, e.g. {\"error\":\"serverError\",\"code\":502}")
            }
            _ = try BanxaAPIError(json: payload)   // the case and its value checked; the rest kept
            return payload
        case dismiss:
            // The SDK passes no data; what the app adds of its own is kept, in an object.
            guard let payload, !payload.isNull else { return .object([]) }
            guard case .object = payload else {
                throw .callbackPayloadMismatch("banxaDidDismiss carries no data of the SDK's; anything the app adds must be an object")
            }
            return payload
        default:
            throw .unknownCallback(provider: BanxaWebhook.provider, callback: callback)
        }
    }
}

/// Banxa's `APIError`, relayed as JSON: `{"error": CASE}` plus the associated value:
/// `serverError` → `code` (Int), `decodingFailed` and `unknown` → `message`,
/// `missingCredentials` → `fields` ([String]), `checkoutFailed` → `rawQuery` (optional).
/// `other` (with `message`) stands for an error that is not an APIError.
public enum BanxaAPIError: Sendable, Hashable {
    case invalidURL
    case serverError(Int)
    case unauthorized
    case decodingFailed(String)
    case networkUnavailable
    case missingCredentials([String])
    case sdkNotConfigured
    case checkoutFailed(String?)
    case unknown(String)
    case other(String)

    public init(json: JSONValue) throws(CoreError) {
        let f = try FieldReader(json, what: "banxaDidFail payload")
        guard let name = try? f.string("error", maxLength: 64) else {
            throw .callbackPayloadMismatch("banxaDidFail needs an \"error\" naming the APIError case")
        }
        func message() throws(CoreError) -> String {
            guard let m = try f.optionalString("message", maxLength: 4096) else {
                throw .callbackPayloadMismatch("\(name) needs a \"message\" string")
            }
            return m
        }
        switch name {
        case "invalidURL": self = .invalidURL
        case "serverError":
            guard let code = f.value("code")?.int64Value, code >= 0, code < 1000 else {
                throw .callbackPayloadMismatch("serverError needs an integer HTTP \"code\"")
            }
            self = .serverError(Int(code))
        case "unauthorized": self = .unauthorized
        case "decodingFailed": self = .decodingFailed(try message())
        case "networkUnavailable": self = .networkUnavailable
        case "missingCredentials":
            guard case .array(let items)? = f.value("fields") else {
                throw .callbackPayloadMismatch("missingCredentials needs \"fields\", an array of strings")
            }
            var names: [String] = []
            for item in items.prefix(16) {
                guard case .string(let s) = item else { throw .callbackPayloadMismatch("missingCredentials.fields must hold strings") }
                names.append(String(s.prefix(64)))
            }
            self = .missingCredentials(names)
        case "sdkNotConfigured": self = .sdkNotConfigured
        case "checkoutFailed": self = .checkoutFailed(try f.optionalString("rawQuery", maxLength: 4096))
        case "unknown": self = .unknown(try message())
        case "other": self = .other(try message())
        default:
            throw .callbackPayloadMismatch("\(CoreError.quote(name)) is not an APIError case")
        }
    }

    public var json: JSONValue {
        switch self {
        case .invalidURL: return .object([("error", .string("invalidURL"))])
        case .serverError(let code): return .object([("error", .string("serverError")), ("code", .integer(code))])
        case .unauthorized: return .object([("error", .string("unauthorized"))])
        case .decodingFailed(let m): return .object([("error", .string("decodingFailed")), ("message", .string(m))])
        case .networkUnavailable: return .object([("error", .string("networkUnavailable"))])
        case .missingCredentials(let fields):
            return .object([("error", .string("missingCredentials")), ("fields", .array(fields.map(JSONValue.string)))])
        case .sdkNotConfigured: return .object([("error", .string("sdkNotConfigured"))])
        case .checkoutFailed(let q):
            return .object(dropNils: [("error", .string("checkoutFailed")), ("rawQuery", q.map(JSONValue.string))])
        case .unknown(let m): return .object([("error", .string("unknown")), ("message", .string(m))])
        case .other(let m): return .object([("error", .string("other")), ("message", .string(m))])
        }
    }
}
