import Foundation
import LedgerCore
import LedgerObservability
import LedgerPostgres

/// Rejected deliveries (bad, missing or stale signatures, and signed ones refused
/// for their content: no order reference, a status outside the table): kept byte
/// for byte in ledger.quarantine with secrets redacted from the headers, counted
/// in `ledger_rejected_deliveries_total{reason}`, never written as events.
///
/// A flood of forged deliveries must not fill the disk, nor crowd out other
/// senders' evidence: each remote address may have `sources.perMinute`
/// rejections a minute kept (`ledger_quarantine_rate_limited_total` counts
/// the rest), and once the table has grown past `budget.maxBytes` nothing
/// more is kept (`ledger_quarantine_full_total`). Every rejection is still
/// answered (401, or 400 for a signed delivery) and counted in
/// `ledger_rejected_deliveries_total`.
package struct Quarantine: Sendable {
    package let pool: ConnectionPool
    package let rejected: Counter
    package let logger: Logger
    package let budget: QuarantineBudget
    package let sources: QuarantineSourceLimit
    package let rateLimited: Counter

    /// Headers whose values may be credentials or signatures, by name or by a part of it.
    package static let secretHeaders: Set<String> = ["authorization", "proxy-authorization", "cookie", "set-cookie"]
    package static let secretWords = ["key", "secret", "token", "signature", "password", "auth", "session"]

    package static func isSecret(_ name: String) -> Bool {
        secretHeaders.contains(name) || secretWords.contains { name.contains($0) }
    }

    /// The headers with every credential's value replaced by `[redacted]`, except what lets
    /// the delivery's signature be checked again (providers.md: keep "the headers that
    /// matter for verification"): a signature is the sender's claim, not a secret. So the
    /// web3 gateway's `X-Pay-Signature` stays, and Banxa's `Authorization: Bearer
    /// KEY:SIGNATURE:NONCE` keeps its signature and nonce with the API key redacted.
    package static func redacted(_ headers: [String: String], provider: String) -> JSONValue {
        .object(headers.sorted { $0.key < $1.key }.map { name, value in
            (name, .string(redactedValue(name, value, provider: provider)))
        })
    }

    private static func redactedValue(_ name: String, _ value: String, provider: String) -> String {
        switch (provider, name) {
        case (Web3Webhook.provider, Web3Webhook.signatureHeader):
            return value
        case (BanxaWebhook.provider, "authorization"):
            guard let credentials = BanxaWebhook.credentials(authorization: value) else { return "[redacted]" }
            return "Bearer [redacted]:\(credentials.signature):\(credentials.nonce)"
        default:
            return isSecret(name) ? "[redacted]" : value
        }
    }

    package func keep(_ request: Delivery, provider: String, error rejection: CoreError) {
        rejected.increment(rejection.reason)
        guard sources.allows(request.remote) else {
            rateLimited.increment()
            return
        }
        do {
            let headers = JSONSerializer.string(Self.redacted(request.headers, provider: provider))
            _ = try pool.withConnection { c in
                try c.transaction { t in
                    // A prune's VACUUM FULL locks the table for its whole rewrite: a delivery
                    // rejected meanwhile is not kept, rather than hold one of the connections
                    // that signed webhooks and token lookups need while it waits.
                    try t.query("SET LOCAL lock_timeout = '\(Self.lockWaitMilliseconds)ms'")
                    guard try budget.allows(on: t) else {
                        notKept("the quarantine is full", [("maxBytes", .int(Int(budget.maxBytes)))])
                        return
                    }
                    try QuarantineStore().keep(QuarantineStore.Rejection(
                        provider: provider, path: request.path, remoteAddress: request.remote, reason: rejection.reason,
                        detail: rejection.message, requestID: request.requestID, headers: headers, raw: request.body), on: t)
                    budget.kept(bytes: Int64(request.body.count + headers.utf8.count + request.path.utf8.count) + Self.rowOverheadBytes)
                }
            }
        } catch let error as PostgresError where error.sqlState == "55P03" {   // lock_not_available: a prune is rewriting the table
            notKept("the quarantine is locked (a prune is rewriting it)", [])
        } catch {
            // The 401 stands either way; losing the quarantine copy is logged, not fatal.
            logger.error("could not quarantine a rejected delivery", [("requestId", .string(request.requestID)),
                                                                      ("reason", .string("\(error)"))])
        }
    }
}

extension Quarantine {
    /// A rejected delivery counted but not kept, and why (warned at most once a minute).
    private func notKept(_ why: String, _ fields: [(String, LogValue)]) {
        budget.dropped.increment()
        if budget.shouldWarn() {
            logger.warning(why + ": rejected deliveries are counted but not kept", fields)
        }
    }

    /// How long a rejected delivery waits for the quarantine's lock before it is not kept.
    static let lockWaitMilliseconds = 200
    /// What a kept row costs beyond its body, headers and path (tuple header, the other
    /// columns, its index entries), for the budget between two measurements.
    static let rowOverheadBytes: Int64 = 256
}

/// How much room the quarantine has left: the table's size, asked of
/// PostgreSQL at most every few seconds (a flood does not cost a size query
/// a delivery), against the configured maximum.
package final class QuarantineBudget: @unchecked Sendable {
    // @unchecked: the mutable fields are guarded by `lock`.
    package let maxBytes: Int64
    package let dropped: Counter
    private let lock = NSLock()
    private var measuredBytes: Int64 = 0
    private var measuredAt: ContinuousClock.Instant?
    private var warnedAt: ContinuousClock.Instant?
    private let recheck: Duration

    package init(maxBytes: Int64, dropped: Counter, recheck: Duration = .seconds(5)) {
        self.maxBytes = maxBytes
        self.dropped = dropped
        self.recheck = recheck
    }

    package func allows(on c: PostgresConnection) throws -> Bool {
        let now = ContinuousClock.now
        let cached: Int64? = lock.withLock {
            guard let measuredAt, now - measuredAt < recheck else { return nil }
            return measuredBytes
        }
        if let cached { return cached < maxBytes }
        let size = try QuarantineStore().sizeBytes(on: c)
        lock.withLock {
            measuredBytes = size
            measuredAt = now
        }
        return size < maxBytes
    }

    /// A row was kept: counted against the budget until the size is measured again, so
    /// a flood within one measurement's interval cannot overshoot it by much.
    package func kept(bytes: Int64) {
        lock.withLock { measuredBytes += bytes }
    }

    /// At most one warning a minute.
    package func shouldWarn() -> Bool {
        let now = ContinuousClock.now
        return lock.withLock {
            if let warnedAt, now - warnedAt < .seconds(60) { return false }
            warnedAt = now
            return true
        }
    }
}
