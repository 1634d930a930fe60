/// The web3 crypto gateway's webhook (providers.md, seed 002).
///
/// Signature: lowercase hex HMAC-SHA256(key = API key as UTF-8, message =
/// `X-Pay-Timestamp` value followed directly by the raw body).
public enum Web3Webhook {
    public static let provider = "web3"
    public static let signatureHeader = "x-pay-signature"
    public static let timestampHeader = "x-pay-timestamp"
    public static let defaultToleranceSeconds: Int64 = 300

    /// The signature a sender computes (lowercase hex); for tests and tooling.
    public static func signature(key: String, timestamp: String, body: [UInt8]) -> String {
        Hex.encode(Crypto.hmacSHA256(key: Array(key.utf8), message: Array(timestamp.utf8) + body))
    }

    /// Checks headers, signature (any of `keys`) and the time window. `headers` are keyed by lowercased name.
    public static func verify(headers: [String: String], body: [UInt8], keys: [String], now: Timestamp,
                              toleranceSeconds: Int64 = defaultToleranceSeconds) throws(CoreError) -> WebhookVerification {
        guard let sigText = WebhookAuth.header(headers, signatureHeader), !sigText.isEmpty else {
            throw .missingSignature(header: "X-Pay-Signature")
        }
        guard let tsText = WebhookAuth.header(headers, timestampHeader), !tsText.isEmpty else {
            throw .missingTimestamp(header: "X-Pay-Timestamp")
        }
        let signature = try WebhookAuth.signatureBytes(sigText)
        let signedAt = try parseTimestamp(tsText)
        var message = Array(tsText.utf8)
        message.append(contentsOf: body)
        let index = try WebhookAuth.matchKey(keys, signature: signature, message: message)
        try WebhookAuth.checkWindow(signedAt, now: now, toleranceSeconds: toleranceSeconds)
        return WebhookVerification(keyIndex: index, keyId: WebhookAuth.keyId(keys[index]), signedAt: signedAt)
    }

    /// Unix seconds (up to 11 digits) or milliseconds (exactly 13 digits).
    public static func parseTimestamp(_ text: String) throws(CoreError) -> Timestamp {
        guard let n = WebhookAuth.digits(text) else { throw .malformedTimestamp(text) }
        switch text.utf8.count {
        case 13: return Timestamp(microseconds: n * 1_000)
        case 1...11: return Timestamp(seconds: n)
        default: throw .malformedTimestamp(text)
        }
    }

    /// Maps a verified body to a status observation (observedAt = the signed time).
    public static func observation(body: [UInt8], verification: WebhookVerification) throws(CoreError) -> StatusObservation {
        let (_, f, leftOut) = try ProviderBody.parseObject(body, what: "webhook body", mapped: Web3Mapping.fields)
        var o = try Web3Mapping.observation(f, source: .webhook, observedAt: verification.signedAt,
                                            idempotencyKey: WebhookAuth.bodyKey(provider, body))
        o.keyId = verification.keyId
        o.leftOut = JSONAlteration.list(leftOut, unread: o.leftOut)
        return o
    }

    /// Verify then map: the one call the webhook endpoint needs.
    public static func ingest(headers: [String: String], body: [UInt8], keys: [String], now: Timestamp,
                              toleranceSeconds: Int64 = defaultToleranceSeconds) throws(CoreError) -> (verification: WebhookVerification, event: LedgerEvent) {
        let v = try verify(headers: headers, body: body, keys: keys, now: now, toleranceSeconds: toleranceSeconds)
        return (v, .observed(try observation(body: body, verification: v)))
    }
}

/// The web3 gateway's queryOrder response `{code, status, statusText, txHash, ...}`.
public enum Web3Query {
    /// Maps the raw bytes of a queryOrder response (what the poller received).
    public static func observation(merchantOrderNo: MerchantOrderNo, responseBody: [UInt8], observedAt: Timestamp) throws(CoreError) -> StatusObservation {
        let (value, _, leftOut) = try ProviderBody.parseObject(responseBody, what: "query response",
                                                               mapped: Web3Mapping.queryFields)
        var o = try observation(merchantOrderNo: merchantOrderNo, response: value, observedAt: observedAt)
        o.leftOut = JSONAlteration.list(leftOut, unread: o.leftOut)
        return o
    }

    /// Maps a response (code 0) to a query observation of `merchantOrderNo`.
    public static func observation(merchantOrderNo: MerchantOrderNo, response: JSONValue, observedAt: Timestamp) throws(CoreError) -> StatusObservation {
        let top = try FieldReader(response, what: "query response")
        guard let codeValue = top.value("code") else { throw .missingField("code") }
        let code = codeValue.scalarText ?? JSONSerializer.string(codeValue)
        guard code == "0" else { throw .providerQueryFailed(code: code, message: try? top.optionalString("msg")) }
        // Some gateways wrap the order in `data`; accept both shapes.
        var f = top
        if !top.has("status"), let data = top.value("data"), case .object = data { f = try FieldReader(data, what: "query response data") }
        if let named = f.value("merchantOrderNo") {
            let text = named.scalarText ?? ""
            if text != merchantOrderNo.value { throw .orderReferenceMismatch(path: merchantOrderNo.value, body: text) }
        }
        return try Web3Mapping.observation(f, source: .query, observedAt: observedAt,
                                           idempotencyKey: QueryKey.make(Web3Webhook.provider, merchantOrderNo, response, observedAt),
                                           orderNo: merchantOrderNo)
    }
}

/// Field mapping shared by the web3 webhook and query. The observation holds the
/// mapped fields only: the provider's body itself is the event's raw bytes.
enum Web3Mapping {
    /// The body's fields that `observation` reads: a body whose parse had to change one
    /// of them is refused (`ProviderBody`).
    static let fields: Set<String> = [
        "merchantOrderNo", "status", "amount", "payAmountDisplay", "tokenSymbol", "txHash", "orderNo",
    ]
    /// A queryOrder answer's: the same, plus its envelope (`code`, `msg`, and `data`, which may wrap the order).
    static let queryFields: Set<String> = fields.union(["code", "msg", "data"])

    static func observation(_ f: FieldReader, source: EventSource, observedAt: Timestamp,
                            idempotencyKey: String, orderNo: MerchantOrderNo? = nil) throws(CoreError) -> StatusObservation {
        let no: MerchantOrderNo
        if let orderNo { no = orderNo } else { no = try f.merchantOrderNo("merchantOrderNo") }
        guard let statusValue = f.value("status") else { throw .missingField("status") }
        let status = try OrderStatus.parse(statusValue)
        // `amount` is the order amount in token units, the unit registrations use;
        // payAmountDisplay is the fallback. payAmountMinimal (in the token's smallest unit)
        // is not read: it stays in the raw body, and whatever it holds refuses nothing.
        // Beyond the order and the status, a field that cannot be read is left out of the
        // mapped fields (the raw body keeps it): refusing the delivery would lose the
        // evidence of a payment (http-api.md: 400 only without the order or the status).
        // An amount that is no plain decimal but short text is kept as written, for rule 6.
        var unread: [JSONValue] = []
        let amount = f.providerAmount("amount", &unread)
        let display = amount == nil ? f.providerAmount("payAmountDisplay", &unread) : nil
        let asset = f.unlessUnreadable("tokenSymbol", &unread) { () throws(CoreError) in try f.optionalString("tokenSymbol", maxLength: 64) }
        let txHash = f.unlessUnreadable("txHash", &unread) { () throws(CoreError) in try f.optionalText("txHash") }
        let orderId = f.unlessUnreadable("orderNo", &unread) { () throws(CoreError) in try f.optionalText("orderNo") }
        var o = StatusObservation(
            merchantOrderNo: no, provider: Web3Webhook.provider, source: source, status: status,
            providerStatus: statusValue.scalarText, observedAt: observedAt, amount: amount ?? display,
            asset: asset, txHash: txHash, providerOrderId: orderId, idempotencyKey: idempotencyKey)
        o.leftOut = unread.isEmpty ? nil : .array(unread)
        return o
    }
}

/// Idempotency keys of query observations: provider + order + hash of the response +
/// observedAt, so the same poll result reported twice is one event, a later identical
/// poll is another, and two orders reporting the same bytes at the same time (a generic
/// `{"status": 3}`) are two events. A provider name has no ':', the hash is 64 hex
/// digits and the time is digits, so the key reads back one way only.
public enum QueryKey {
    static func make(_ provider: String, _ orderNo: MerchantOrderNo, _ response: JSONValue, _ observedAt: Timestamp) -> String {
        provider + ":query:" + orderNo.value + ":" + digest(response, observedAt)
    }

    /// The key an observation had before keys named the order (`provider:query:hash:time`),
    /// so a report stored then is still recognised when re-reported; nil for any other key.
    public static func legacy(of key: String, orderNo: MerchantOrderNo) -> String? {
        guard let colon = key.firstIndex(of: ":") else { return nil }
        let provider = String(key[..<colon])
        let prefix = provider + ":query:" + orderNo.value + ":"
        guard key.hasPrefix(prefix) else { return nil }
        let rest = key.dropFirst(prefix.count)
        guard rest.utf8.count > 65, rest.utf8.dropFirst(64).first == UInt8(ascii: ":") else { return nil }
        return provider + ":query:" + String(rest)
    }

    private static func digest(_ response: JSONValue, _ observedAt: Timestamp) -> String {
        Hex.encode(Crypto.sha256(JSONSerializer.bytes(response))) + ":" + String(observedAt.microseconds)
    }
}
