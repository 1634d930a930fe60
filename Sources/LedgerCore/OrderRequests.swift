/// Parsers for the ingest API's order requests (http-api.md), producing canonical events.
public enum OrderRequests {
    /// `POST /v1/orders`: `{merchantOrderNo, provider, amount, asset, chainId?, tokenId?,
    /// fiatCurrency?, fiatAmount?, externalCustomerId?, providerOrderId?, providerResponse?}`.
    public static func registration(body: [UInt8], receivedAt: Timestamp) throws(CoreError) -> OrderRegistration {
        let (_, f) = try FieldReader.parseRequest(body, what: "request body")
        let no = try f.merchantOrderNo("merchantOrderNo")
        let provider = try f.provider()
        let response = f.value("providerResponse")
        var providerOrderId = try f.optionalText("providerOrderId")
        // web3's createOrder response names the gateway's order number.
        if providerOrderId == nil, provider == Web3Webhook.provider, let r = response, case .object = r,
           let id = r["orderNo"]?.scalarText {
            // Indexed in the read model: bounded like every other reference.
            guard id.utf8.count <= 1024 else {
                throw .invalidField(name: "providerResponse.orderNo", reason: "it is longer than 1024 characters")
            }
            providerOrderId = id
        }
        let fiatAmount = try f.optionalAmount("fiatAmount")
        let fiatCurrency = try f.optionalString("fiatCurrency", maxLength: 16)
        return OrderRegistration(
            merchantOrderNo: no, provider: provider, amount: try f.amount("amount"), asset: try f.string("asset", maxLength: 64),
            chainId: try f.optionalText("chainId", maxLength: 64), tokenId: try f.optionalText("tokenId", maxLength: 64),
            fiatCurrency: fiatCurrency, fiatAmount: fiatAmount,
            externalCustomerId: try f.optionalString("externalCustomerId", maxLength: 256),
            providerOrderId: providerOrderId, providerResponse: response, registeredAt: receivedAt)
    }

    /// `POST /v1/orders/{no}/observations`: `{provider, response, observedAt?}`, a
    /// provider query result the merchant backend fetched. web3 and banxa responses
    /// are mapped by their adapters (a Banxa `refunded` gives an adjustment); any other
    /// provider's response must carry `status` 1-6.
    public static func observation(merchantOrderNo: MerchantOrderNo, body: [UInt8], receivedAt: Timestamp) throws(CoreError) -> LedgerEvent {
        let (_, f) = try FieldReader.parseRequest(body, what: "request body")
        let provider = try f.provider()
        guard let response = f.value("response") else { throw .missingField("response") }
        guard case .object = response else { throw .notAnObject(what: "response") }
        let given = try f.optionalTimestamp("observedAt")
        return try QueryObservation.map(provider: provider, merchantOrderNo: merchantOrderNo, response: response,
                                        observedAt: given, receivedAt: receivedAt)
    }

    /// `POST /v1/orders/{no}/corrections`: `{status, reason, correctionId?}` from an auditor.
    /// The idempotency key is `operator:` + the correctionId (a UUID the caller may send to
    /// make retries safe), else `uniqueId` (the caller's `Idempotency-Key`), else the
    /// content keyed to the order's newest event (`CorrectionKey`), at `newestPosition`.
    public static func correction(merchantOrderNo: MerchantOrderNo, body: [UInt8], actor: String, uniqueId: String?,
                                  newestPosition: Int64 = 0, receivedAt: Timestamp) throws(CoreError) -> StatusObservation {
        let (_, f) = try FieldReader.parseRequest(body, what: "request body")
        guard let statusValue = f.value("status") else { throw .missingField("status") }
        let status = try OrderStatus.parse(statusValue)
        let reason = try f.string("reason", maxLength: 2000)
        var key = uniqueId
        if let id = try f.optionalString("correctionId", maxLength: 36) {
            guard let uuid = UUIDText.canonical(id) else { throw .invalidField(name: "correctionId", reason: "it must be a UUID") }
            key = uuid
        }
        let provider = try f.has("provider") ? f.provider() : "operator"
        var correction = StatusObservation(
            merchantOrderNo: merchantOrderNo, provider: provider, source: .operator, status: status,
            providerStatus: "correction", observedAt: receivedAt, actor: actor, reason: reason,
            idempotencyKey: "")
        correction.idempotencyKey = key.map { "operator:" + merchantOrderNo.stream + ":" + $0 }
            ?? CorrectionKey.afterNewest(correction, newestPosition: newestPosition)
        return correction
    }
}

/// Keys of corrections sent without an id: the content (provider, status, actor, reason)
/// and the position of the order's newest event when it was sent. The same correction
/// sent again while it is still the order's newest event, and the order already shows
/// what it asked for, is a replay (http-api.md: a replayed write answers 200
/// duplicate); sent again after other events, or while the order shows another status
/// (a report with a later `observedAt` outranked it), it is a new event. Two copies
/// racing see the same newest event, so they share one key and one of them is stored.
public enum CorrectionKey {
    public static func afterNewest(_ correction: StatusObservation, newestPosition: Int64) -> String {
        prefix(correction) + String(newestPosition) + ":" + digest(correction)
    }

    /// True when `correction` is keyed by its content (it came without an id), `storedKey`,
    /// the order's newest event's key, is the same content's key, and sending it again
    /// would change nothing: the order shows its status, or is paid and it is not (paid
    /// is sticky: such a correction is only ever recorded as a conflict).
    public static func isReplay(storedKey: String, of correction: StatusObservation, currentStatus: OrderStatus) -> Bool {
        let prefix = prefix(correction), suffix = ":" + digest(correction)
        let changesNothing = currentStatus == correction.status || (currentStatus.isPaid && !correction.status.isPaid)
        return changesNothing
            && correction.idempotencyKey.hasPrefix(prefix) && correction.idempotencyKey.hasSuffix(suffix)
            && storedKey.hasPrefix(prefix) && storedKey.hasSuffix(suffix)
    }

    private static func prefix(_ c: StatusObservation) -> String { "operator:" + c.merchantOrderNo.stream + ":after:" }

    private static func digest(_ c: StatusObservation) -> String {
        // Each field length-prefixed, so no two contents run together into one text.
        let fields = [c.provider, String(c.status.rawValue), c.actor ?? "", c.reason ?? ""]
        return Hex.encode(Crypto.sha256(Array(fields.map { String($0.utf8.count) + ":" + $0 }.joined().utf8)))
    }
}

/// Query observations: the poller's results and those the merchant backend reports.
public enum QueryObservation {
    /// Maps a provider's query response. `observedAt` defaults to the provider's own
    /// time where the response has one (Banxa status_date), else `receivedAt`.
    public static func map(provider: String, merchantOrderNo: MerchantOrderNo, response: JSONValue,
                           observedAt given: Timestamp?, receivedAt: Timestamp) throws(CoreError) -> LedgerEvent {
        switch provider {
        case Web3Webhook.provider:
            return .observed(try Web3Query.observation(merchantOrderNo: merchantOrderNo, response: response,
                                                       observedAt: given ?? receivedAt))
        case BanxaWebhook.provider:
            // Banxa's API wraps an order as {data: {order: {...}}}; accept it bare too.
            var order = response
            if let data = response["data"] { order = data["order"] ?? data }
            let f = try FieldReader(order, what: "Banxa order")
            // As for every query observation, the key hashes the response with the time given,
            // else the arrival time: a poll that still says the same is a new observation
            // (lifecycle rule 7); the observation's own time is status_date where readable.
            let key = QueryKey.make(provider, merchantOrderNo, response, given ?? receivedAt)
            // A backend that already mapped the status sends it as a number 1-6.
            if case .number? = f.value("status") {
                if let named = try f.optionalText("external_id"), named != merchantOrderNo.value {
                    throw .orderReferenceMismatch(path: merchantOrderNo.value, body: named)
                }
                let observedAt = try BanxaMapping.observationTime(f, given: given, receivedAt: receivedAt)
                var observation = try GenericQuery.observation(provider: provider, merchantOrderNo: merchantOrderNo,
                                                               response: order, observedAt: observedAt)
                observation.idempotencyKey = key
                return .observed(observation)
            }
            return try BanxaMapping.event(f, source: .query, observedAt: given, receivedAt: receivedAt,
                                          idempotencyKey: key, keyId: nil, orderNo: merchantOrderNo)
        default:
            return .observed(try GenericQuery.observation(provider: provider, merchantOrderNo: merchantOrderNo,
                                                          response: response, observedAt: given ?? receivedAt))
        }
    }
}

/// Any provider without an adapter: the response gives the canonical `status` (1-6)
/// directly; optional `providerStatus` (or `statusText`), `amount`, `asset`,
/// `fiatAmount`, `fiatCurrency`, `txHash`, `providerOrderId` (or `orderNo`). The whole
/// response is kept in the event's raw bytes (the request that carried it).
public enum GenericQuery {
    public static func observation(provider: String, merchantOrderNo: MerchantOrderNo, response: JSONValue,
                                   observedAt: Timestamp) throws(CoreError) -> StatusObservation {
        let f = try FieldReader(response, what: "response")
        guard let statusValue = f.value("status") else { throw .missingField("status") }
        let status = try OrderStatus.parse(statusValue)
        if let named = f.value("merchantOrderNo"), named.scalarText != merchantOrderNo.value {
            throw .orderReferenceMismatch(path: merchantOrderNo.value, body: named.scalarText ?? JSONSerializer.string(named))
        }
        var providerStatus = try f.optionalText("providerStatus", maxLength: 128)
        if providerStatus == nil { providerStatus = try f.optionalText("statusText", maxLength: 128) }
        var orderId = try f.optionalText("providerOrderId")
        if orderId == nil { orderId = try f.optionalText("orderNo") }
        return StatusObservation(
            merchantOrderNo: merchantOrderNo, provider: provider, source: .query, status: status,
            providerStatus: providerStatus ?? statusValue.scalarText, observedAt: observedAt,
            amount: try f.optionalAmount("amount"), asset: try f.optionalString("asset", maxLength: 64),
            fiatAmount: try f.optionalAmount("fiatAmount"), fiatCurrency: try f.optionalString("fiatCurrency", maxLength: 16),
            txHash: try f.optionalText("txHash"), providerOrderId: orderId,
            idempotencyKey: QueryKey.make(provider, merchantOrderNo, response, observedAt))
    }
}
