import Foundation
import LedgerCore
import LedgerPostgres

/// The scale phase's ledger, built fast: `events` events in real order streams,
/// appended through the store's own path (one GroupCommitter, binary COPY, the
/// hash chain) in large batches, with no projector: `ledger rebuild` then makes
/// the read models from them (and is timed doing it).
///
/// Every order gets what `http_ingest_mix` sends for it, made by the core as the
/// service makes it: its registration (`POST /v1/orders`), web3 webhooks for
/// statuses 1, 2 and 3, and one client event; five events an order. With `eventsPerOrder`
/// below 5, the registration and the last webhooks (2: registered, then paid). With `key`, each
/// webhook is signed with it and its signature headers are kept in its metadata, as the
/// service keeps them, so that `ledger verify` given the key checks every one again.
///
/// `Layout.grouped` appends each order's events together; `Layout.phased` appends every
/// order's registration, then every order's first webhook, and so on, so that an order's
/// events lie an `eventsPerOrder`th of the log apart: the far end of a ledger whose orders
/// are paid long after they are registered, for the reads that follow streams.
struct ScaleFill {
    enum Layout: String {
        case grouped, phased
    }

    var databaseURL: String
    var events: Int
    var threads = 2
    var ordersPerCall = 200
    var key: String?
    var layout = Layout.grouped
    var eventsPerOrder = Self.allEvents

    static let allEvents = 5

    func run() throws -> Report {
        let pool = ConnectionPool(configuration: DatabaseConfiguration(connectionString: databaseURL, poolSize: 2))
        defer { pool.close() }
        let committer = GroupCommitter(pool: pool, projector: nil, maxBatch: 5000, maxQueuedEvents: 1_000_000)
        let run = EventSample.hex(UInt64.random(in: 0...UInt64(UInt32.max)), width: 8)
        let orders = (events + eventsPerOrder - 1) / eventsPerOrder
        let next = Counter()
        let failures = Counter()
        let began = MonotonicClock.now()
        // Grouped: one pass, every event of each order. Phased: one pass per event of an order.
        let chosen = Self.chosen(count: eventsPerOrder)
        let passes: [Int?] = layout == .grouped ? [nil] : chosen.indices.map { $0 }
        for pass in passes {
            next.reset()
            let group = DispatchGroup()
            for _ in 0..<threads {
                group.enter()
                Thread {
                    defer { group.leave() }
                    while true {
                        let first = next.add(ordersPerCall)
                        guard first < orders else { return }
                        var batch: [NewEvent] = []
                        batch.reserveCapacity(ordersPerCall * eventsPerOrder)
                        for n in first..<min(orders, first + ordersPerCall) {
                            // Only the events this pass appends are made (each webhook is signed).
                            let kinds = pass.map { [chosen[$0]] } ?? chosen
                            guard let made = try? kinds.map({ try Self.orderEvent($0, run: run, n: n, key: key) }) else {
                                _ = failures.add(1)
                                continue
                            }
                            batch += made
                        }
                        do {
                            let outcomes = try committer.append(batch, timeout: 120)
                            let refused = outcomes.filter { if case .appended = $0 { return false } else { return true } }.count
                            if refused > 0 { _ = failures.add(refused) }
                        } catch {
                            FileHandle.standardError.write(Data("fill: \(error)\n".utf8))
                            _ = failures.add(batch.count)
                        }
                    }
                }.start()
            }
            group.wait()
        }
        let elapsed = MonotonicClock.seconds(MonotonicClock.now() - began)
        committer.shutdown()
        let head = try pool.withConnection { try EventStore().head(on: $0).position }
        var report = Report(phase: "fill")
        report["orders"] = String(orders)
        report["events"] = String(orders * eventsPerOrder)
        report["failed"] = String(failures.value)
        report["head"] = String(head)
        report["seconds"] = Report.format(elapsed)
        report["rate"] = Report.format(Double(orders * eventsPerOrder) / elapsed)
        return report
    }

    /// Which of an order's five events (`orderEvent`'s kinds) an order of `count` gets: all,
    /// or the registration and the last `count - 1` webhooks.
    static func chosen(count: Int) -> [Int] {
        count >= allEvents ? Array(0..<allEvents) : [0] + Array((4 - (count - 1))..<4)
    }

    /// Event `kind` of order `S-<run>-<n>`, as the service would store it: 0 its
    /// registration, 1-3 its web3 webhooks for statuses 1, 2 and 3, 4 its client event.
    static func orderEvent(_ kind: Int, run: String, n: Int, key: String? = nil) throws -> NewEvent {
        let order = "S-\(run)-\(n)"
        let now = Timestamp.now()
        let tag = run + EventSample.hex(UInt64(n), width: 16)
        let providerOrderNo = "P" + tag.prefix(24)
        switch kind {
        case 0:
            let registration = Array(MixRequestFiles.registrationBody(order: order, providerOrderNo: providerOrderNo).utf8)
            return try mapped(.registered(OrderRequests.registration(body: registration, receivedAt: now)),
                              raw: registration, verifiedBy: "token:bench-ingest")
        case 1...3:
            // The fingerprint the service records: verify checks the signature with that key.
            let verification = WebhookVerification(keyIndex: 0, keyId: key.map(WebhookVerification.keyId(of:)) ?? "k1:3f2a9c0e", signedAt: now)
            let body = Array(EventSample.web3Body(order: order, orderNo: providerOrderNo,
                                                  txHash: "0x" + EventSample.txHex(tag + String(kind)), status: kind).utf8)
            let timestamp = String(now.seconds)
            let signedWith = key.map { key -> JSONValue in .object([
                ("X-Pay-Timestamp", .string(timestamp)),
                ("X-Pay-Signature", .string(Web3Webhook.signature(key: key, timestamp: timestamp, body: body))),
            ]) }
            return try mapped(.observed(Web3Webhook.observation(body: body, verification: verification)),
                              raw: body, verifiedBy: "signature", signedWith: signedWith)
        default:
            let client = Array(MixRequestFiles.clientEventBody(id: MixRequestFiles.uuid(run: run, n: n)).utf8)
            return try mapped(.clientSignal(ClientEventRequest.parse(merchantOrderNo: MerchantOrderNo(order), body: client, receivedAt: now)),
                              raw: client, verifiedBy: "token:bench-ingest")
        }
    }

    /// As the service's EventMapping.newEvent: the core's payload in jsonb's form, its
    /// metadata with the receipt beside it.
    static func mapped(_ event: LedgerEvent, raw: [UInt8], verifiedBy: String, signedWith: JSONValue? = nil) throws -> NewEvent {
        var metadata = event.metadata.objectFields ?? []
        metadata.append(("requestId", .string("bench-fill")))
        metadata.append(("verifiedBy", .string(verifiedBy)))
        if let signedWith { metadata.append(("signedWith", signedWith)) }
        let payload = JSONBText.payload(event).map { String(decoding: $0, as: UTF8.self) }
        let metadataText = JSONBText.string(.object(metadata))
        return NewEvent(stream: event.stream, type: event.type, source: event.source.rawValue,
                        payloadJSON: payload ?? JSONSerializer.string(event.payload), raw: raw,
                        metadataJSON: metadataText ?? JSONSerializer.string(.object(metadata)),
                        idempotencyKey: event.idempotencyKey, observedAt: event.observedAt,
                        renderedAsJSONB: payload != nil && metadataText != nil)
    }
}

/// A shared counter for the fill's threads.
final class Counter: @unchecked Sendable {
    // @unchecked: `count` is only touched under `lock`.
    private let lock = NSLock()
    private var count = 0
    /// Adds `n` and returns the value before.
    func add(_ n: Int) -> Int { lock.lock(); defer { lock.unlock() }; let before = count; count += n; return before }
    func reset() { lock.lock(); defer { lock.unlock() }; count = 0 }
    var value: Int { lock.lock(); defer { lock.unlock() }; return count }
}
