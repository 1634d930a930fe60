import Dispatch
import LedgerCore
import LedgerPostgres

/// The answer to a write: the event (new or the original of a duplicate).
package struct WriteResult: Sendable {
    package var eventID: String
    package var position: Int64
    package var duplicate: Bool
}

/// Write use cases: every input becomes one event, committed through the
/// group committer (so a 2xx always means committed), with the read model
/// updated in the same transaction.
package struct Ingestion: Sendable {
    /// How long a write waits for its commit before answering 503 (the event may still
    /// commit; a retry then answers duplicate).
    package static let commitWaitSeconds: Double = 8

    package let configuration: ServiceConfiguration
    package let pool: ConnectionPool
    package let committer: GroupCommitter
    package let quarantine: Quarantine
    package let orders = OrderReadModel()

    // MARK: webhooks

    package func web3Webhook(_ request: Delivery, now: Timestamp) throws -> WriteResult {
        let event: LedgerEvent
        do throws(CoreError) {
            (_, event) = try Web3Webhook.ingest(headers: request.headers, body: request.body,
                                                      keys: configuration.web3APIKeys, now: now,
                                                      toleranceSeconds: configuration.signatureToleranceSeconds)
        } catch {
            // Unauthenticated, or signed and refused for its content: either way kept.
            quarantine.keep(request, provider: Web3Webhook.provider, error: error)
            throw error
        }
        return try commit(event, raw: request.body, request: request, verifiedBy: "signature",
                          signedWith: Self.web3SignedWith(request), keyedByBody: true)
    }

    /// The web3 webhook without a waiting thread: verifies and maps on the calling
    /// thread, queues the event on the group committer and returns at once; `answer`
    /// runs after the commit (on the committer's answering queue). Returns false, having
    /// done nothing, for a delivery that fails verification or mapping: `web3Webhook`
    /// then handles it on a worker (it may write to the quarantine, which blocks).
    package func submitWeb3Webhook(_ request: Delivery, now: Timestamp,
                           answer: @escaping @Sendable (Result<WriteResult, Error>) -> Void) -> Bool {
        guard let (_, event) = try? Web3Webhook.ingest(headers: request.headers, body: request.body,
                                                       keys: configuration.web3APIKeys, now: now,
                                                       toleranceSeconds: configuration.signatureToleranceSeconds)
        else { return false }
        let new = EventMapping.newEvent(event, raw: request.body,
                                        receipt: Receipt(requestID: request.requestID, verifiedBy: "signature",
                                                         signedWith: Self.web3SignedWith(request)))
        let pool = self.pool
        committer.submit([new], attachments: [event]) { result in
            if case .success(let outcomes) = result, case .keyConflict(let existing) = outcomes[0] {
                // Off the answering queue: counting needs a connection. The redelivery is
                // answered once it is counted, as on the blocking path (`commit`).
                DispatchQueue.global().async {
                    answer(Result {
                        try pool.withConnection { try EventStore().countRedelivery(of: existing.position, on: $0) }
                        return try Self.writeResult(outcomes[0], keyedByBody: true)
                    })
                }
                return
            }
            answer(result.flatMap { outcomes in Result { try Self.writeResult(outcomes[0], keyedByBody: true) } })
        }
        return true
    }

    /// The signature headers a web3 delivery was verified with, kept in its event's metadata.
    private static func web3SignedWith(_ request: Delivery) -> JSONValue {
        .object([
            ("X-Pay-Timestamp", .string(request.header(Web3Webhook.timestampHeader) ?? "")),
            ("X-Pay-Signature", .string(request.header(Web3Webhook.signatureHeader) ?? "")),
        ])
    }

    package func banxaWebhook(_ request: Delivery, now: Timestamp) throws -> WriteResult {
        let event: LedgerEvent
        do throws(CoreError) {
            guard let apiKey = configuration.banxaAPIKey else {
                throw CoreError.noKeysConfigured
            }
            (_, event) = try BanxaWebhook.ingest(headers: request.headers, body: request.body, apiKey: apiKey,
                                                 secrets: configuration.banxaAPISecrets, now: now,
                                                 toleranceSeconds: configuration.signatureToleranceSeconds)
        } catch {
            // Unauthenticated, or signed and refused for its content: either way kept.
            quarantine.keep(request, provider: BanxaWebhook.provider, error: error)
            throw error
        }
        // Keep the signature and nonce and the path they cover, read as the verification read them.
        let credentials = BanxaWebhook.credentials(authorization: request.header("authorization") ?? "")
        let signedWith: JSONValue = .object([
            ("path", .string(BanxaWebhook.path)),
            ("signature", .string(credentials?.signature ?? "")),
            ("nonce", .string(credentials?.nonce ?? "")),
        ])
        return try commit(event, raw: request.body, request: request, verifiedBy: "signature", signedWith: signedWith,
                          keyedByBody: true)
    }

    // MARK: API writes

    /// 201 for a new order, 200 for the same content again, 409 for other content.
    package func register(_ request: Delivery, principal: Principal, now: Timestamp) throws -> (created: Bool, order: JSONValue) {
        let registration = try OrderRequests.registration(body: request.body, receivedAt: now)
        let outcome = try append(.registered(registration), raw: request.body, request: request, principal: principal)
        let no = registration.merchantOrderNo
        switch outcome {
        case .appended:
            return (true, try orderJSON(no))
        case .duplicate:
            return (false, try orderJSON(no))
        case .keyConflict(let existing):
            // Same content may still be spelled differently ("40" vs "40.00").
            let stored = try pool.withConnection { try EventStore().read(stream: no.stream, on: $0) }
            guard let original = stored.first(where: { $0.position == existing.position }),
                  case .registered(let earlier) = try EventMapping.recorded(original).event,
                  earlier.sameContent(as: registration) else {
                throw ServiceError.conflict("order \(no.value) is already registered with different content")
            }
            return (false, try orderJSON(no))
        case .versionConflict:
            throw ServiceError.internalError("unexpected version conflict")
        }
    }

    package func observe(_ no: MerchantOrderNo, _ request: Delivery, principal: Principal, now: Timestamp) throws -> WriteResult {
        var event = try OrderRequests.observation(merchantOrderNo: no, body: request.body, receivedAt: now)
        try refuseFuture(event.observedAt, "observedAt", now: now)
        // Without observedAt the core keys a query observation by its arrival time, so a
        // replay would be a new event. An Idempotency-Key header makes replays duplicates.
        let idempotencyKey = try Self.idempotencyKey(request)
        if let key = idempotencyKey {
            let scoped = "\(event.provider):query:\(no.stream):request:\(key)"
            switch event {
            case .observed(var o): o.idempotencyKey = scoped; event = .observed(o)
            case .adjustment(var a): a.idempotencyKey = scoped; event = .adjustment(a)
            default: break
            }
        }
        if idempotencyKey == nil, let earlier = try storedUnderLegacyKey(event, no) {
            try pool.withConnection { try EventStore().countRedelivery(of: earlier.position, on: $0) }
            return WriteResult(eventID: earlier.eventID, position: earlier.position, duplicate: true)
        }
        let outcome = try appendOutcome(event, raw: request.body, request: request, verifiedBy: "token:" + principal.name)
        // Keyed by the order, the response and its time (no Idempotency-Key): a key conflict
        // is the same report, mapped by an earlier version (see `writeResult`).
        if idempotencyKey == nil, case .keyConflict(let existing) = outcome,
           try pool.withConnection({ try EventStore().streamAndType(at: existing.position, on: $0) })
               .map({ $0.stream == event.stream && $0.type == event.type }) == true {
            try pool.withConnection { try EventStore().countRedelivery(of: existing.position, on: $0) }
            return WriteResult(eventID: existing.eventID, position: existing.position, duplicate: true)
        }
        return try Self.writeResult(outcome)
    }

    /// The same report stored before query keys named the order (`QueryKey.legacy`): a
    /// re-report of it is a duplicate, not a second event. A key of that form in another
    /// stream is another order's report, and this one is new.
    private func storedUnderLegacyKey(_ event: LedgerEvent, _ no: MerchantOrderNo) throws -> EventReceipt? {
        let key: String
        switch event {
        case .observed(let o): key = o.idempotencyKey
        case .adjustment(let a): key = a.idempotencyKey
        default: return nil
        }
        guard let legacy = QueryKey.legacy(of: key, orderNo: no),
              let stored = try pool.withConnection({ try EventStore().keyed(legacy, on: $0) }),
              stored.stream == event.stream, stored.type == event.type else { return nil }
        return stored.receipt
    }

    package func clientEvent(_ no: MerchantOrderNo, _ request: Delivery, principal: Principal, now: Timestamp) throws -> WriteResult {
        try Self.refuseLargeRelay(request)
        let signal = try ClientEventRequest.parse(merchantOrderNo: no, body: request.body, receivedAt: now)
        try refuseFuture(signal.occurredAt, "occurredAt", now: now, toleranceSeconds: Self.clientClockToleranceSeconds)
        return try commitRelay(.clientSignal(signal), request, principal: principal)
    }

    package func enrollmentEvent(_ ref: String, _ request: Delivery, principal: Principal, now: Timestamp) throws -> WriteResult {
        try Self.refuseLargeRelay(request)
        let signal = try ClientEventRequest.parseEnrollment(enrollmentRef: ref, body: request.body, receivedAt: now)
        try refuseFuture(signal.occurredAt, "occurredAt", now: now, toleranceSeconds: Self.clientClockToleranceSeconds)
        return try commitRelay(.enrollment(signal), request, principal: principal)
    }

    /// A relayed SDK callback. Its key is the app's `clientEventId`; a stored event with
    /// that key and another payload is still this relay when its raw bytes are the
    /// request's: an earlier version parsed the same bytes into a smaller payload (before
    /// client events kept every field). Anything else under the key is a conflict (409).
    private func commitRelay(_ event: LedgerEvent, _ request: Delivery, principal: Principal) throws -> WriteResult {
        if principal.role == .client { try refuseSpentQuota(event) }
        let outcome = try appendOutcome(event, raw: request.body, request: request, verifiedBy: "token:" + principal.name)
        if case .keyConflict(let existing) = outcome,
           try pool.withConnection({ try EventStore().raw(at: existing.position, on: $0) }) == request.body {
            try pool.withConnection { try EventStore().countRedelivery(of: existing.position, on: $0) }
            return WriteResult(eventID: existing.eventID, position: existing.position, duplicate: true)
        }
        return try Self.writeResult(outcome)
    }

    /// The newest event wins in the read models (the status, the last client signal), so a
    /// time in the future would pin what they show until then: beyond `toleranceSeconds`
    /// (the signature clock tolerance unless given) it is refused.
    private func refuseFuture(_ time: Timestamp?, _ field: String, now: Timestamp, toleranceSeconds: Int64? = nil) throws {
        guard let time else { return }
        let tolerance = toleranceSeconds ?? configuration.signatureToleranceSeconds
        guard time.microseconds <= now.microseconds + tolerance * 1_000_000 else {
            throw ServiceError.badRequest("\(field) \(time.rfc3339) is in the future (beyond the \(tolerance) s clock tolerance)")
        }
    }

    /// Relayed callbacks a stream takes from client tokens: an app sends a handful per order
    /// (Banxa's three delegate callbacks, BankPay's few); a phone's token cannot fill the
    /// append-only log with more. The merchant backend's ingest token is not counted against.
    package static let clientRelaysPerStream: Int64 = 200

    /// Refuses a client token's relay once its stream holds `clientRelaysPerStream` client
    /// events, unless it is the retry of one stored (that still answers as a duplicate).
    private func refuseSpentQuota(_ event: LedgerEvent) throws {
        let (stream, key): (String, String)
        switch event {
        case .clientSignal(let c): (stream, key) = (c.merchantOrderNo.stream, c.idempotencyKey)
        case .enrollment(let e): (stream, key) = (e.stream, e.idempotencyKey)
        default: return
        }
        let spent = try pool.withConnection { c -> Bool in
            let store = EventStore()
            guard try store.clientEvents(inStream: stream, on: c) >= Self.clientRelaysPerStream else { return false }
            return try store.keyed(key, on: c) == nil
        }
        if spent {
            throw ServiceError.tooMany("\(stream) holds \(Self.clientRelaysPerStream) client events already, as many as client tokens may relay "
                                       + "to one order or enrollment; relay further callbacks through the merchant backend")
        }
    }

    /// The largest relayed SDK callback: an app's token is in the hands of whoever holds the
    /// phone, and every byte it sends is kept for good (the raw body and its payload) and read
    /// back whole by each history of the order. An SDK's callback data is a few hundred bytes.
    package static let relayMaxBytes = 64 * 1024

    private static func refuseLargeRelay(_ request: Delivery) throws {
        guard request.body.count <= relayMaxBytes else {
            throw ServiceError.tooLarge("a client event's body is at most \(relayMaxBytes) bytes, and this one is \(request.body.count): "
                                        + "relay the SDK callback's own data only")
        }
    }

    /// An app's clock is often off by minutes: its callbacks are refused only a day ahead.
    package static let clientClockToleranceSeconds: Int64 = 86_400

    package func correct(_ no: MerchantOrderNo, _ request: Delivery, principal: Principal, now: Timestamp) throws -> WriteResult {
        // The state first: an event landing between the two reads is then the newest one,
        // and the correction is no replay.
        let found = try pool.withConnection { c in
            (try orders.load(no, on: c)?.0, try EventStore().newest(inStream: no.stream, on: c))
        }
        guard let state = found.0, let newest = found.1 else { throw ServiceError.notFound("no order \(no.value)") }
        // A retried correction carries the same Idempotency-Key (or correctionId); without
        // either, the same correction sent while it is still the order's newest event, and
        // changes nothing, is a replay (`CorrectionKey`).
        let explicit = try Self.idempotencyKey(request)
        let event = try OrderRequests.correction(merchantOrderNo: no, body: request.body, actor: principal.name,
                                                 uniqueId: explicit, newestPosition: newest.receipt.position, receivedAt: now)
        if CorrectionKey.isReplay(storedKey: newest.idempotencyKey, of: event, currentStatus: state.status) {
            try pool.withConnection { try EventStore().countRedelivery(of: newest.receipt.position, on: $0) }
            return WriteResult(eventID: newest.receipt.eventID, position: newest.receipt.position, duplicate: true)
        }
        return try commit(.observed(event), raw: request.body, request: request, verifiedBy: "token:" + principal.name)
    }

    // MARK: plumbing

    /// The request's `Idempotency-Key` header, if it has one: 1-128 visible ASCII characters, else 400.
    package static func idempotencyKey(_ request: Delivery) throws -> String? {
        guard let key = request.header("idempotency-key") else { return nil }
        guard (1...128).contains(key.utf8.count), key.unicodeScalars.allSatisfy({ $0.value > 32 && $0.value < 127 }) else {
            throw ServiceError.badRequest("Idempotency-Key must be 1-128 visible ASCII characters")
        }
        return key
    }

    package func orderJSON(_ no: MerchantOrderNo) throws -> JSONValue {
        guard let json = try pool.withConnection({ try orders.json(no, on: $0) }) else {
            throw ServiceError.internalError("order \(no.value) has events but no read model")
        }
        return json
    }

    private func append(_ event: LedgerEvent, raw: [UInt8], request: Delivery, principal: Principal) throws -> AppendOutcome {
        try appendOutcome(event, raw: raw, request: request, verifiedBy: "token:" + principal.name)
    }

    private func appendOutcome(_ event: LedgerEvent, raw: [UInt8], request: Delivery, verifiedBy: String,
                               signedWith: JSONValue? = nil) throws -> AppendOutcome {
        let receipt = Receipt(requestID: request.requestID, verifiedBy: verifiedBy, signedWith: signedWith)
        let new = EventMapping.newEvent(event, raw: raw, receipt: receipt)
        return try committer.append([new], attachments: [event], timeout: Self.commitWaitSeconds)[0]
    }

    package func commit(_ event: LedgerEvent, raw: [UInt8], request: Delivery, verifiedBy: String,
                signedWith: JSONValue? = nil, keyedByBody: Bool = false) throws -> WriteResult {
        let outcome = try appendOutcome(event, raw: raw, request: request, verifiedBy: verifiedBy, signedWith: signedWith)
        if keyedByBody, case .keyConflict(let existing) = outcome {
            try pool.withConnection { try EventStore().countRedelivery(of: existing.position, on: $0) }
        }
        return try Self.writeResult(outcome, keyedByBody: keyedByBody)
    }

    /// A single-event write's answer, or the error it means for the caller.
    ///
    /// `keyedByBody`: the event's idempotency key is a hash of the raw body (a webhook),
    /// which names the order, so the same key is the same delivery to the same stream. A
    /// stored event with that key and another payload was then mapped by an earlier
    /// version of the adapters (before an upgrade that changed the mapping, such as
    /// dropping the body copy from the payload): the delivery is still a redelivery,
    /// answered as a duplicate of the stored event, not as a conflict (the caller counts
    /// the redelivery).
    package static func writeResult(_ outcome: AppendOutcome, keyedByBody: Bool = false) throws -> WriteResult {
        switch outcome {
        case .appended(let r): return WriteResult(eventID: r.eventID, position: r.position, duplicate: false)
        case .duplicate(let r, _): return WriteResult(eventID: r.eventID, position: r.position, duplicate: true)
        case .keyConflict(let existing) where keyedByBody:
            return WriteResult(eventID: existing.eventID, position: existing.position, duplicate: true)
        case .keyConflict:
            throw ServiceError.conflict("an event with this idempotency key already exists with different content")
        case .versionConflict:
            throw ServiceError.internalError("unexpected version conflict")
        }
    }
}
