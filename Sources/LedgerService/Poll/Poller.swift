import LedgerCore
import LedgerObservability
import LedgerPostgres

/// The ledger's poller (operations.md, providers.md): asks the web3 gateway about
/// every order a poll can still change, and records each answer as a query
/// observation, an event like any other (lifecycle rule 7: a poll that still says
/// 1 is a new event that leaves the state as it was).
///
/// Which orders are due lives in `ledger.polls` (Migration 028). A pass first enrols
/// the pollable orders it has not seen (due at once) and forgets those no poll can
/// change any more, then claims the due ones a few at a time with a lease (`FOR
/// UPDATE SKIP LOCKED`), so two pollers (`ledger serve` and `ledger poll --once`)
/// never ask about one order at the same time.
package struct Poller: Sendable {
    package let pool: ConnectionPool
    package let committer: GroupCommitter
    package let gateway: Web3Gateway
    package let logger: Logger

    /// Orders claimed at once. A claim's lease outlasts asking about all of them:
    /// each takes at most the gateway's timeout and a commit's wait.
    package static let claimSize = 5
    package static var leaseSeconds: Int64 {
        Int64(claimSize) * Int64(Web3Gateway.timeoutSeconds + 2 + Ingestion.commitWaitSeconds) + 30
    }

    package struct Summary: Sendable, Equatable {
        package var polled = 0
        package var recorded = 0
        package var failed = 0
    }

    /// One pass: enrols orders updated since `since` (PostgreSQL's clock), then asks about
    /// the due ones until none is left, `limit` have been asked about, or `stopping`.
    /// Returns what it did and PostgreSQL's time when it began, for the next `since`.
    package func pass(since: Timestamp?, limit: Int = PollPolicy.passLimit,
              stopping: () -> Bool = { false }) throws -> (Summary, began: Timestamp) {
        let began = try pool.withConnection { c -> Timestamp in
            let now = try c.query("SELECT ledger.micros(now()) AS now_us").int64(0, "now_us")
            let from = since?.microseconds ?? (now - PollPolicy.maxAgeSeconds * 1_000_000)
            try c.query(Self.enrolSQL, [.int(from), .int(PollPolicy.maxAgeSeconds), Self.pollableStatuses])
            try c.query(Self.forgetSQL, [.int(PollPolicy.maxAgeSeconds), Self.pollableStatuses])
            return Timestamp(microseconds: now)
        }
        var summary = Summary()
        while summary.polled < limit, !stopping() {
            let claimed = try claim(min(Self.claimSize, limit - summary.polled))
            if claimed.isEmpty { break }
            for (index, (no, attempts)) in claimed.enumerated() {
                if stopping() {
                    try release(claimed[index...].map(\.0))
                    return (summary, began)
                }
                summary.polled += 1
                var failure: String?
                do {
                    if try poll(no) { summary.recorded += 1 }
                } catch {
                    summary.failed += 1
                    failure = gateway.redacted(String(describing: error))
                    logger.warning("a poll of the web3 gateway gave no observation, or it could not be recorded",
                                   [("order", .string(no.value)), ("error", .string(failure ?? ""))])
                }
                let next = PollPolicy.delaySeconds(afterAttempts: attempts + 1)
                try pool.withConnection { c in
                    try c.query(Self.rescheduleSQL, [.text(no.value), .int(next), .optional(failure)])
                }
            }
        }
        return (summary, began)
    }

    private func claim(_ count: Int) throws -> [(MerchantOrderNo, Int)] {
        let rows = try pool.withConnection { c in
            try c.query(Self.claimSQL, [.int(PollPolicy.maxAgeSeconds), .int(Int64(count)), .int(Self.leaseSeconds),
                                        Self.pollableStatuses])
        }
        return try (0..<rows.count).compactMap { r in
            // An order number the core refuses cannot have been stored; skip it rather than stall.
            guard let no = try? MerchantOrderNo(stored: try rows.string(r, "merchant_order_no")) else { return nil }
            return (no, Int(try rows.int64(r, "attempts")))
        }
    }

    /// Gives claimed orders back (a stop in the middle of a claim): due again at once.
    private func release(_ numbers: [MerchantOrderNo]) throws {
        guard !numbers.isEmpty else { return }
        try pool.withConnection { c in
            try c.query("UPDATE ledger.polls SET next_poll_at = now() WHERE merchant_order_no = ANY($1::text[])",
                        [.text("{" + numbers.map { "\"" + $0.value + "\"" }.joined(separator: ",") + "}")])
        }
    }

    /// Asks about one order and records the answer; true when it was a new event.
    private func poll(_ no: MerchantOrderNo) throws -> Bool {
        let body = try gateway.queryOrder(no)
        let observation = try Web3Query.observation(merchantOrderNo: no, responseBody: body, observedAt: .now())
        let event = LedgerEvent.observed(observation)
        let new = EventMapping.newEvent(event, raw: body, receipt: Receipt(requestID: "poll:" + no.value, verifiedBy: "poller"))
        switch try committer.append([new], attachments: [event], timeout: Ingestion.commitWaitSeconds)[0] {
        case .appended: return true
        case .duplicate: return false
        case .keyConflict, .versionConflict: throw ServiceError.internalError("the poll's event for \(no.value) conflicts with a stored one")
        }
    }

    /// The statuses `PollPolicy.wantsPolling`, as a PostgreSQL array.
    package static let pollableStatuses = SQLValue.text("{" + OrderStatus.allCases.filter(PollPolicy.wantsPolling)
        .map { String($0.rawValue) }.joined(separator: ",") + "}")

    /// Orders a poll can still change: web3, not paid or expired, created within the
    /// poller's horizon; those updated since `$1` and not yet enrolled are due at once.
    package static let enrolSQL = """
        INSERT INTO ledger.polls (merchant_order_no, next_poll_at)
        SELECT o.merchant_order_no, now()
          FROM ledger.orders o
         WHERE o.updated_at >= ledger.from_micros($1)
           AND o.provider = 'web3' AND o.status = ANY($3::smallint[])
           AND coalesce(o.created_at, o.updated_at) >= now() - make_interval(secs => $2)
        ON CONFLICT (merchant_order_no) DO NOTHING
        """

    /// Due rows whose order no poll can change any more (paid, expired, too old).
    package static let forgetSQL = """
        DELETE FROM ledger.polls p
         USING ledger.orders o
         WHERE p.next_poll_at <= now() AND o.merchant_order_no = p.merchant_order_no
           AND NOT (o.provider = 'web3' AND o.status = ANY($2::smallint[])
                    AND coalesce(o.created_at, o.updated_at) >= now() - make_interval(secs => $1))
        """

    /// The due orders, oldest due first, each leased for `$3` seconds.
    package static let claimSQL = """
        WITH due AS (
            SELECT p.merchant_order_no
              FROM ledger.polls p
              JOIN ledger.orders o ON o.merchant_order_no = p.merchant_order_no
             WHERE p.next_poll_at <= now()
               AND o.provider = 'web3' AND o.status = ANY($4::smallint[])
               AND coalesce(o.created_at, o.updated_at) >= now() - make_interval(secs => $1)
             ORDER BY p.next_poll_at, p.merchant_order_no
             LIMIT $2
               FOR UPDATE OF p SKIP LOCKED
        )
        UPDATE ledger.polls p
           SET next_poll_at = now() + make_interval(secs => $3)
          FROM due
         WHERE p.merchant_order_no = due.merchant_order_no
        RETURNING p.merchant_order_no, p.attempts
        """

    package static let rescheduleSQL = """
        UPDATE ledger.polls
           SET attempts = attempts + 1, last_polled_at = now(), last_error = $3,
               next_poll_at = now() + make_interval(secs => $2)
         WHERE merchant_order_no = $1
        """
}
