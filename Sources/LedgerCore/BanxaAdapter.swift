/// What a Banxa order status means to the lifecycle.
public enum BanxaStatusMeaning: Sendable, Hashable {
    case status(OrderStatus)
    /// `refunded`: an adjustment, never a status change (lifecycle.md).
    case refund
}

/// The Banxa on-ramp's webhook (providers.md, seed 000).
///
/// `Authorization: Bearer API_KEY:SIGNATURE:NONCE`, SIGNATURE = lowercase hex
/// HMAC-SHA256(secret, "POST\n" + path + "\n" + NONCE + "\n" + raw body), NONCE
/// a Unix time in milliseconds or microseconds.
public enum BanxaWebhook {
    public static let provider = "banxa"
    public static let path = "/v1/webhooks/banxa"
    public static let defaultToleranceSeconds: Int64 = 300

    /// The status table of providers.md. Matching ignores case, `_`, `-` and
    /// spaces, so "PAYMENT_RECEIVED" reads like "paymentReceived".
    public static func meaning(of status: String) -> BanxaStatusMeaning? {
        var key = ""
        for c in status.lowercased().unicodeScalars where c != "_" && c != "-" && c != " " { key.unicodeScalars.append(c) }
        switch key {
        case "pendingpayment": return .status(.awaitingPayment)
        case "waitingpayment", "inprogress": return .status(.confirming)
        // Banxa's own docs also spell the older name "coinsTransferred" (renamed cryptoTransferred in 2024).
        case "paymentreceived", "cryptotransferred", "cointransferred", "coinstransferred": return .status(.paid)
        case "complete": return .status(.completed)
        case "expired", "cancelled", "declined": return .status(.expired)
        case "extraverification": return .status(.manualReview)
        case "refunded": return .refund
        default: return nil
        }
    }

    /// The signature Banxa computes (lowercase hex); for tests and tooling.
    public static func signature(secret: String, path: String = path, nonce: String, body: [UInt8]) -> String {
        Hex.encode(Crypto.hmacSHA256(key: Array(secret.utf8), message: message(path: path, nonce: nonce, body: body)))
    }

    static func message(path: String, nonce: String, body: [UInt8]) -> [UInt8] {
        var m = Array("POST\n".utf8)
        m.append(contentsOf: path.utf8)
        m.append(0x0a)
        m.append(contentsOf: nonce.utf8)
        m.append(0x0a)
        m.append(contentsOf: body)
        return m
    }

    /// Checks the Authorization header: the configured API key, the signature
    /// with any of `secrets`, and the nonce's time window.
    public static func verify(headers: [String: String], body: [UInt8], apiKey: String, secrets: [String],
                              path: String = path, now: Timestamp,
                              toleranceSeconds: Int64 = defaultToleranceSeconds) throws(CoreError) -> WebhookVerification {
        guard let auth = WebhookAuth.header(headers, "authorization"), !auth.isEmpty else {
            throw .missingSignature(header: "Authorization")
        }
        guard let (key, sigText, nonce) = credentials(authorization: auth) else {
            throw .malformedSignature("the Authorization header must be 'Bearer KEY:SIGNATURE:NONCE'")
        }
        let signature = try WebhookAuth.signatureBytes(sigText)
        let signedAt = try parseNonce(nonce)
        guard Crypto.constantTimeEqual(Array(key.utf8), Array(apiKey.utf8)) else { throw .unknownAPIKey }
        let index = try WebhookAuth.matchKey(secrets, signature: signature, message: message(path: path, nonce: nonce, body: body))
        try WebhookAuth.checkWindow(signedAt, now: now, toleranceSeconds: toleranceSeconds)
        return WebhookVerification(keyIndex: index, keyId: WebhookAuth.keyId(secrets[index]), signedAt: signedAt)
    }

    /// The parts of an `Authorization: Bearer KEY:SIGNATURE:NONCE` value, split from the
    /// right: the key is whatever precedes the last two colons (it may hold one). Nil when
    /// the value is not of that shape.
    public static func credentials(authorization: String) -> (key: String, signature: String, nonce: String)? {
        let utf8 = Array(authorization.utf8)
        guard utf8.count > 7, String(decoding: utf8[0..<7], as: UTF8.self).lowercased() == "bearer " else { return nil }
        let parts = String(decoding: utf8[7...], as: UTF8.self).split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count >= 3 else { return nil }
        return (parts[0..<(parts.count - 2)].joined(separator: ":"), String(parts[parts.count - 2]), String(parts[parts.count - 1]))
    }

    /// Milliseconds (13 digits) or microseconds (16 digits) since the epoch.
    public static func parseNonce(_ text: String) throws(CoreError) -> Timestamp {
        guard let n = WebhookAuth.digits(text) else { throw .malformedTimestamp(text) }
        switch text.utf8.count {
        case 13: return Timestamp(microseconds: n * 1_000)
        case 16: return Timestamp(microseconds: n)
        default: throw .malformedTimestamp(text)
        }
    }

    /// Maps a verified body to a status observation, or to an adjustment for `refunded`.
    public static func event(body: [UInt8], verification: WebhookVerification, receivedAt: Timestamp) throws(CoreError) -> LedgerEvent {
        let (_, f, leftOut) = try ProviderBody.parseObject(body, what: "webhook body", mapped: BanxaMapping.fields)
        var event = try BanxaMapping.event(f, source: .webhook, observedAt: nil, receivedAt: receivedAt,
                                           idempotencyKey: WebhookAuth.bodyKey(provider, body), keyId: verification.keyId)
        switch event {
        case .observed(var o): o.leftOut = JSONAlteration.list(leftOut, unread: o.leftOut); event = .observed(o)
        case .adjustment(var a): a.leftOut = JSONAlteration.list(leftOut, unread: a.leftOut); event = .adjustment(a)
        default: break
        }
        return event
    }

    /// Verify then map: the one call the webhook endpoint needs.
    public static func ingest(headers: [String: String], body: [UInt8], apiKey: String, secrets: [String],
                              path: String = path, now: Timestamp,
                              toleranceSeconds: Int64 = defaultToleranceSeconds) throws(CoreError) -> (verification: WebhookVerification, event: LedgerEvent) {
        let v = try verify(headers: headers, body: body, apiKey: apiKey, secrets: secrets, path: path, now: now,
                           toleranceSeconds: toleranceSeconds)
        return (v, try event(body: body, verification: v, receivedAt: now))
    }
}

/// Banxa order fields (v2 webhook body, or an order the merchant fetched) to events.
/// The events hold the mapped fields only: the provider's body itself is the event's raw bytes.
enum BanxaMapping {
    /// The body's fields that `event` reads: a body whose parse had to change one of
    /// them is refused (`ProviderBody`).
    static let fields: Set<String> = [
        "external_id", "status", "status_date", "updated_at", "crypto_amount", "fiat_amount",
        "crypto_coin", "fiat_currency", "order_id", "transaction_hash",
    ]

    /// Banxa's own time for the status. `status_date` comes without a zone ("2024-01-31
    /// 12:48:36"): read as UTC; the raw string stays in the raw body. An unreadable one
    /// falls back to `updated_at`; none readable, or one more than the clock tolerance
    /// after `receivedAt` (a far-future time would pin the status, lifecycle rule 2), is
    /// nil: the receipt time is used, rather than losing a signed delivery.
    static func providerTime(_ f: FieldReader, receivedAt: Timestamp) throws(CoreError) -> Timestamp? {
        for name in ["status_date", "updated_at"] {
            // A value that is no string, or a string too long to be a time, is unreadable too.
            guard let text = try? f.optionalString(name, maxLength: 64), let t = Timestamp.parse(text, lenient: true) else { continue }
            return t.microseconds <= receivedAt.microseconds + BanxaWebhook.defaultToleranceSeconds * 1_000_000 ? t : nil
        }
        return nil
    }

    /// The time `given`, else Banxa's own (`providerTime`), else the receipt time.
    static func observationTime(_ f: FieldReader, given: Timestamp?, receivedAt: Timestamp) throws(CoreError) -> Timestamp {
        if let given { return given }
        if let own = try providerTime(f, receivedAt: receivedAt) { return own }
        return receivedAt
    }

    static func event(_ f: FieldReader, source: EventSource, observedAt given: Timestamp?,
                      receivedAt: Timestamp, idempotencyKey: String, keyId: String?,
                      orderNo: MerchantOrderNo? = nil) throws(CoreError) -> LedgerEvent {
        let no: MerchantOrderNo
        if let orderNo {
            no = orderNo
            if let named = try f.optionalText("external_id"), named != orderNo.value {
                throw .orderReferenceMismatch(path: orderNo.value, body: named)
            }
        } else {
            no = try f.merchantOrderNo("external_id")
        }
        let statusText = try f.string("status", maxLength: 64)
        guard let meaning = BanxaWebhook.meaning(of: statusText) else { throw .unknownBanxaStatus(statusText) }
        let observedAt = try observationTime(f, given: given, receivedAt: receivedAt)
        // Beyond the order and the status, a field that cannot be read is left out of the
        // mapped fields (the raw body keeps it): refusing the delivery would lose the
        // evidence of a payment (http-api.md: 400 only without the order or the status).
        var unread: [JSONValue] = []
        // An amount that is no plain decimal but short text is kept as written, for rule 6.
        let cryptoAmount = f.providerAmount("crypto_amount", &unread)
        let fiatAmount = f.providerAmount("fiat_amount", &unread)
        let coin = f.unlessUnreadable("crypto_coin", &unread) { () throws(CoreError) in try f.optionalString("crypto_coin", maxLength: 64) }
        let fiat = f.unlessUnreadable("fiat_currency", &unread) { () throws(CoreError) in try f.optionalString("fiat_currency", maxLength: 64) }
        let orderId = f.unlessUnreadable("order_id", &unread) { () throws(CoreError) in try f.optionalText("order_id") }
        let txHash = f.unlessUnreadable("transaction_hash", &unread) { () throws(CoreError) in try f.optionalText("transaction_hash") }
        let leftOut: JSONValue? = unread.isEmpty ? nil : .array(unread)
        switch meaning {
        case .status(let status):
            var o = StatusObservation(
                merchantOrderNo: no, provider: BanxaWebhook.provider, source: source, status: status,
                // A crypto amount without its coin cannot be compared with anything: it
                // stays in the raw body, but is not offered to the amount check.
                providerStatus: statusText, observedAt: observedAt, amount: coin == nil ? nil : cryptoAmount, asset: coin,
                fiatAmount: fiatAmount, fiatCurrency: fiat, txHash: txHash,
                providerOrderId: orderId, keyId: keyId, idempotencyKey: idempotencyKey)
            o.leftOut = leftOut
            return .observed(o)
        case .refund:
            // A card or bank refund returns fiat, so the fiat amount is the refund's amount.
            var a = Adjustment(
                merchantOrderNo: no, provider: BanxaWebhook.provider, source: source, kind: "refund",
                amount: fiatAmount ?? cryptoAmount, asset: fiatAmount != nil ? fiat : coin,
                providerStatus: statusText, observedAt: observedAt, providerOrderId: orderId, keyId: keyId,
                idempotencyKey: idempotencyKey)
            a.leftOut = leftOut
            return .adjustment(a)
        }
    }
}
