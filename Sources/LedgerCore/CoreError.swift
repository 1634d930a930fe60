/// Everything the pure core can reject, each case explaining itself in a sentence.
///
/// Callers tell who sent a request from what it says with `isUnauthenticated`
/// (the API answers 401 and quarantines the delivery, else 400); `reason` is a
/// short stable label for metrics and problem+json `type` suffixes.
public enum CoreError: Error, Hashable, Sendable, CustomStringConvertible {
    // Authentication of webhook deliveries (quarantined).
    case missingSignature(header: String)
    case malformedSignature(String)
    case badSignature
    case unknownAPIKey
    case missingTimestamp(header: String)
    case malformedTimestamp(String)
    /// The delivery's time is older than now by more than the tolerance.
    case staleTimestamp(skewSeconds: Int64, toleranceSeconds: Int64)
    /// The delivery's time is ahead of now by more than the tolerance.
    case futureTimestamp(skewSeconds: Int64, toleranceSeconds: Int64)
    case noKeysConfigured

    // Body and field problems.
    case notUTF8
    case invalidJSON(JSONError)
    case notAnObject(what: String)
    case missingField(String)
    case invalidField(name: String, reason: String)
    case missingOrderReference
    case invalidMerchantOrderNo(String)
    case invalidEnrollmentRef(String)
    case statusOutOfRange(String)
    case unknownBanxaStatus(String)
    case amountTooLong(length: Int, limit: Int)
    case invalidAmount(String)
    case unknownCallback(provider: String, callback: String)
    case callbackPayloadMismatch(String)
    case orderReferenceMismatch(path: String, body: String)
    case providerQueryFailed(code: String, message: String?)
    case invalidEvent(type: String, reason: String)

    /// True for problems with who sent the request rather than what it says:
    /// the service answers 401 and keeps the bytes in quarantine.
    public var isUnauthenticated: Bool {
        switch self {
        case .missingSignature, .malformedSignature, .badSignature, .unknownAPIKey,
             .missingTimestamp, .malformedTimestamp, .staleTimestamp, .futureTimestamp,
             .noKeysConfigured:
            return true
        default:
            return false
        }
    }

    /// A short machine label (metrics, quarantine reason, problem type).
    public var reason: String {
        switch self {
        case .missingSignature: return "missing_signature"
        case .malformedSignature: return "malformed_signature"
        case .badSignature: return "bad_signature"
        case .unknownAPIKey: return "unknown_api_key"
        case .missingTimestamp: return "missing_timestamp"
        case .malformedTimestamp: return "malformed_timestamp"
        case .staleTimestamp: return "stale_timestamp"
        case .futureTimestamp: return "future_timestamp"
        case .noKeysConfigured: return "no_keys_configured"
        case .notUTF8: return "not_utf8"
        case .invalidJSON: return "invalid_json"
        case .notAnObject: return "not_an_object"
        case .missingField: return "missing_field"
        case .invalidField: return "invalid_field"
        case .missingOrderReference: return "missing_order_reference"
        case .invalidMerchantOrderNo: return "invalid_merchant_order_no"
        case .invalidEnrollmentRef: return "invalid_enrollment_ref"
        case .statusOutOfRange: return "status_out_of_range"
        case .unknownBanxaStatus: return "unknown_banxa_status"
        case .amountTooLong: return "amount_too_long"
        case .invalidAmount: return "invalid_amount"
        case .unknownCallback: return "unknown_callback"
        case .callbackPayloadMismatch: return "callback_payload_mismatch"
        case .orderReferenceMismatch: return "order_reference_mismatch"
        case .providerQueryFailed: return "provider_query_failed"
        case .invalidEvent: return "invalid_event"
        }
    }

    /// A sentence a user can act on (problem+json `detail`).
    public var message: String {
        switch self {
        case .missingSignature(let header):
            return "The request has no \(header) header, so its origin cannot be verified."
        case .malformedSignature(let why):
            return "The signature header is malformed: \(why)."
        case .badSignature:
            return "The signature does not match the body with any configured key."
        case .unknownAPIKey:
            return "The API key named in the Authorization header is not the configured one."
        case .missingTimestamp(let header):
            return "The request has no \(header) header; a signed time is required to stop replays."
        case .malformedTimestamp(let text):
            return "The signed time \(Self.quote(text)) is not a Unix time in the accepted units."
        case .staleTimestamp(let skew, let tolerance):
            return "The signed time is \(skew) s in the past, beyond the \(tolerance) s tolerance (a replay or a badly delayed delivery)."
        case .futureTimestamp(let skew, let tolerance):
            return "The signed time is \(skew) s in the future, beyond the \(tolerance) s tolerance (check the sender's clock)."
        case .noKeysConfigured:
            return "No verification keys are configured for this provider, so no delivery can be accepted."
        case .notUTF8:
            return "The body is not valid UTF-8."
        case .invalidJSON(let error):
            return "The body is not valid JSON: \(error.message)."
        case .notAnObject(let what):
            return "The \(what) must be a JSON object."
        case .missingField(let name):
            return "The required field \(name) is missing."
        case .invalidField(let name, let why):
            return "The field \(name) is invalid: \(why)."
        case .missingOrderReference:
            return "The body names no merchant order number, so the event cannot be attached to an order."
        case .invalidMerchantOrderNo(let text):
            if MerchantOrderNo.isDotSegment(text) { return "The merchant order number (merchantOrderNo) \(Self.dotSegment(text))" }
            return "The merchant order number (merchantOrderNo) \(Self.quote(text)) is not 1-64 characters of A-Z a-z 0-9 . _ : -."
        case .invalidEnrollmentRef(let text):
            if MerchantOrderNo.isDotSegment(text) { return "The enrollment reference \(Self.dotSegment(text))" }
            return "The enrollment reference \(Self.quote(text)) is not 1-64 characters of A-Z a-z 0-9 . _ : -."
        case .statusOutOfRange(let text):
            return "The status \(Self.quote(text)) is not one of the lifecycle codes 1 to 6."
        case .unknownBanxaStatus(let text):
            return "The Banxa status \(Self.quote(text)) is not in the status table; the delivery was not recorded."
        case .amountTooLong(let length, let limit):
            return "The amount is too long (\(length) characters, at most \(limit))."
        case .invalidAmount(let text):
            return "The amount \(Self.quote(text)) is not a plain decimal number such as 40 or 0.015."
        case .unknownCallback(let provider, let callback):
            return "The callback \(Self.quote(callback)) is not one that the \(provider) SDK emits here."
        case .callbackPayloadMismatch(let why):
            return "The callback payload does not fit its callback: \(why)."
        case .orderReferenceMismatch(let path, let body):
            return "The body names order \(Self.quote(body)) but the request is for order \(Self.quote(path))."
        case .providerQueryFailed(let code, let msg):
            return "The provider answered the query with code \(code)" + (msg.map { " (\(Self.quote($0)))" } ?? "") + ", which is not a result."
        case .invalidEvent(let type, let why):
            return "A stored \(type) event cannot be read back: \(why)."
        }
    }

    public var description: String { "\(reason): \(message)" }

    /// Why `.` and `..` are refused although their characters are allowed.
    private static func dotSegment(_ text: String) -> String {
        "\(quote(text)) is a dot segment, which clients that normalise URLs (curl, browsers) remove from a path: it could never be reached by its path."
    }

    /// Quotes user text for a message, cut short so a huge input cannot bloat a response.
    static func quote(_ text: String) -> String {
        let cut = text.unicodeScalars.count > 80 ? String(String.UnicodeScalarView(text.unicodeScalars.prefix(80))) + "…" : text
        var out = "\""
        for scalar in cut.unicodeScalars {
            if scalar.value < 0x20 || scalar.value == 0x7f { out += "\\u{\(String(scalar.value, radix: 16))}" } else { out.unicodeScalars.append(scalar) }
        }
        return out + "\""
    }
}
