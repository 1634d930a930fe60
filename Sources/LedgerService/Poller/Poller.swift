import LedgerCore
import LedgerHTTP
import LedgerPostgres

/// The ledger's poller (operations.md, providers.md): asks the web3 gateway about
/// every order a poll can still change, and records each answer as a query
/// observation, an event like any other (lifecycle rule 7: a poll that still says
/// 1 is a new event that leaves the state as it was).
///
/// Which orders are due lives in `ledger.polls` (Migration 028). A pass first enrols
/// the pollable orders it has not seen (due at once), then claims the due ones with
/// a lease (`FOR UPDATE SKIP LOCKED`), so two pollers (`ledger serve` and `ledger poll
/// --once`) never ask about the same order at the same time.
struct Poller: Sendable {
    let pool: ConnectionPool
    let committer: GroupCommitter
    let gateway: Web3Gateway
    let logger: Logger

    /// The statuses `PollPolicy.wantsPolling`, as a PostgreSQL array.
    static let pollableStatuses = SQLValue.text("{" + OrderStatus.allCases.filter(PollPolicy.wantsPolling)
        .map { String($0.rawValue) }.joined(separator: ",") + "}")

    /// How long a claimed order is kept from other pollers while it is asked about.
    static let leaseSeconds: Int64 = 120

    struct Summary: Sendable, Equatable {
        var polled = 0
        var recorded = 0
        var failed = 0
    }

    /// One pass: enrols orders updated since `since`, then asks about every due one.
    func pass(since: Timestamp) throws -> Summary {
        let claimed = try pool.withConnection { c -> [(MerchantOrderNo, Int)] in
            try c.query(Self.enrolSQL, [.int(since.microseconds), .int(PollPolicy.maxAgeSeconds), Self.pollableStatuses])
            let rows = try c.query(Self.claimSQL, [.int(PollPolicy.maxAgeSeconds), .int(Int64(PollPolicy.passLimit)),
                                                   .int(Self.leaseSeconds), Self.pollableStatuses])
            return try (0..<rows.count).map { (try MerchantOrderNo(try rows.string($0, "merchant_order_no")),
                                                Int(try rows.int64($0, "attempts"))) }
        }
        var summary = Summary()
        for (no, attempts) in claimed {
            summary.polled += 1
            var failure: String?
            do {
                if try poll(no) { summary.recorded += 1 }
            } catch {
                summary.failed += 1
                failure = String(describing: error)
                logger.warning("a poll of the web3 gateway gave no observation",
                               [("order", .string(no.value)), ("error", .string(failure ?? ""))])
            }
            let next = PollPolicy.delaySeconds(afterAttempts: attempts + 1)
            try pool.withConnection { c in
                try c.query(Self.rescheduleSQL, [.text(no.value), .int(next), .optional(failure)])
            }
        }
        return summary
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

    /// Orders a poll can still change: web3, not paid or expired, created within the
    /// poller's horizon; those updated since `$1` and not yet enrolled are due at once.
    static let enrolSQL = """
        INSERT INTO ledger.polls (merchant_order_no, next_poll_at)
        SELECT o.merchant_order_no, now()
          FROM ledger.orders o
         WHERE o.updated_at >= ledger.from_micros($1)
           AND o.provider = 'web3' AND o.status = ANY($3::smallint[])
           AND coalesce(o.created_at, o.updated_at) >= now() - make_interval(secs => $2)
        ON CONFLICT (merchant_order_no) DO NOTHING
        """

    /// The due orders, oldest due first, each leased for `$3` seconds.
    static let claimSQL = """
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

    static let rescheduleSQL = """
        UPDATE ledger.polls
           SET attempts = attempts + 1, last_polled_at = now(), last_error = $3,
               next_poll_at = now() + make_interval(secs => $2)
         WHERE merchant_order_no = $1
        """
}
