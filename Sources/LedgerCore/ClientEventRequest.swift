/// Parses `POST /v1/orders/{no}/client-events` and `POST /v1/enrollments/{ref}/client-events`:
/// `{provider, callback, payload, clientEventId (UUID), occurredAt?, sdkVersion?}`.
public enum ClientEventRequest {
    /// An SDK callback for an order: Banxa and BankPay (transaction flow)
    /// payloads are checked against their SDKs; other providers may relay a
    /// callback of one of the names providers.md lists (`knownNames`), with any
    /// JSON payload.
    public static func parse(merchantOrderNo: MerchantOrderNo, body: [UInt8], receivedAt: Timestamp) throws(CoreError) -> ClientSignal {
        let (_, f) = try FieldReader.parseRequest(body, what: "request body")
        let common = try Common(f)
        let callback: String
        let payload: JSONValue
        switch common.provider {
        case BanxaWebhook.provider:
            guard BanxaCallbacks.names.contains(common.callback) else {
                throw .unknownCallback(provider: common.provider, callback: common.callback)
            }
            callback = common.callback
            payload = try BanxaCallbacks.normalize(callback: callback, payload: common.payload)
        case BankPayCallbacks.provider:
            (callback, payload) = try BankPayCallbacks.normalize(callback: common.callback, payload: common.payload, flow: .transaction)
        default:
            guard knownNames.contains(common.callback) else {
                throw .unknownCallback(provider: common.provider, callback: common.callback)
            }
            callback = common.callback
            payload = common.payload ?? .object([])
        }
        return ClientSignal(merchantOrderNo: merchantOrderNo, provider: common.provider, callback: callback, payload: payload,
                            clientEventId: common.clientEventId, occurredAt: common.occurredAt, receivedAt: receivedAt,
                            sdkVersion: common.sdkVersion)
    }

    /// The callback names of providers.md (and http-api.md's client events): Banxa's
    /// delegate callbacks and BankPay's dictionaries.
    public static let knownNames: Set<String> = Set(BanxaCallbacks.names).union([
        BankPayCallbacks.bankAccountAdded, BankPayCallbacks.acceptedServiceFee, BankPayCallbacks.close, BankPayCallbacks.error,
    ])

    /// A BankPay enrollment callback, for the enrollment's own stream.
    public static func parseEnrollment(enrollmentRef: String, body: [UInt8], receivedAt: Timestamp) throws(CoreError) -> EnrollmentSignal {
        guard MerchantOrderNo.isValid(enrollmentRef) else { throw .invalidEnrollmentRef(enrollmentRef) }
        let (_, f) = try FieldReader.parseRequest(body, what: "request body")
        let common = try Common(f)
        guard common.provider == BankPayCallbacks.provider else {
            throw .invalidField(name: "provider", reason: "enrollments are BankPay's; the provider must be \"bankpay\"")
        }
        let (callback, payload) = try BankPayCallbacks.normalize(callback: common.callback, payload: common.payload, flow: .enrollment)
        return EnrollmentSignal(enrollmentRef: enrollmentRef, provider: common.provider, callback: callback, payload: payload,
                                clientEventId: common.clientEventId, occurredAt: common.occurredAt, receivedAt: receivedAt,
                                sdkVersion: common.sdkVersion)
    }

    private struct Common {
        var provider: String
        var callback: String
        var payload: JSONValue?
        var clientEventId: String
        var occurredAt: Timestamp?
        var sdkVersion: String?

        init(_ f: FieldReader) throws(CoreError) {
            provider = try f.provider()
            callback = try f.string("callback", maxLength: 64)
            guard FieldReader.isProviderName(callback) else {
                throw .invalidField(name: "callback", reason: "a callback name is letters, digits, '.', '_' or '-'")
            }
            payload = f.value("payload")
            let id = try f.string("clientEventId", maxLength: 36)
            guard let uuid = UUIDText.canonical(id) else {
                throw .invalidField(name: "clientEventId", reason: "it must be a UUID such as 0b7c2a4e-3f1d-4c8a-9e2b-5d6f7a8b9c0d")
            }
            clientEventId = uuid
            occurredAt = try f.optionalTimestamp("occurredAt")
            sdkVersion = try f.optionalString("sdkVersion", maxLength: 64)
        }
    }
}

/// UUID text checks without Foundation's parser (which accepts forms we do not want).
enum UUIDText {
    /// The lowercased UUID when `text` is 8-4-4-4-12 hex digits, else nil.
    static func canonical(_ text: String) -> String? {
        let b = Array(text.utf8)
        guard b.count == 36 else { return nil }
        for (i, c) in b.enumerated() {
            if i == 8 || i == 13 || i == 18 || i == 23 {
                guard c == UInt8(ascii: "-") else { return nil }
            } else {
                let hex = (c >= 48 && c <= 57) || (c >= 65 && c <= 70) || (c >= 97 && c <= 102)
                guard hex else { return nil }
            }
        }
        return text.lowercased()
    }
}
