import LedgerCore

/// ledger.polls: which orders the poller asks about next. A pass enrols the pollable
/// orders it has not seen (due at once) and forgets those no poll can change any more,
/// then claims the due ones a few at a time with a lease (`FOR UPDATE SKIP LOCKED`),
/// so two pollers never ask about one order at the same time.
///
/// "Pollable" is decided by the caller's policy: `statuses` are the lifecycle codes a
/// poll can still change, `maxAgeSeconds` the horizon after an order's creation.
package struct PollSchedule: Sendable {
    package let statuses: [Int]
    package let maxAgeSeconds: Int64
    /// The delay of a backoff that starts again: an enrolled order whose status changed
    /// since a pass last looked at it is asked about at most this long after.
    package let restartDelaySeconds: Int64

    package init(statuses: [Int], maxAgeSeconds: Int64, restartDelaySeconds: Int64) {
        self.statuses = statuses
        self.maxAgeSeconds = maxAgeSeconds
        self.restartDelaySeconds = restartDelaySeconds
    }

    private var statusArray: SQLValue { .text("{" + statuses.map(String.init).joined(separator: ",") + "}") }

    /// Enrols the pollable orders updated since `sinceMicros` (nil: the whole horizon),
    /// restarts the backoff of those enrolled already whose status changed, and forgets
    /// the due rows no poll can change; returns PostgreSQL's time when it began.
    package func enrol(sinceMicros: Int64?, on c: PostgresConnection) throws -> Int64 {
        let now = try self.now(on: c)
        let from = sinceMicros ?? (now - maxAgeSeconds * 1_000_000)
        try c.query(Self.enrolSQL, [.int(from), .int(maxAgeSeconds), statusArray, .int(restartDelaySeconds)])
        try c.query(Self.forgetSQL, [.int(maxAgeSeconds), statusArray])
        return now
    }

    /// PostgreSQL's time now, in microseconds: what a pass claims up to, read once its
    /// enrolment (whose new rows are due at its own `now()`) is done.
    package func now(on c: PostgresConnection) throws -> Int64 {
        try c.query("SELECT ledger.micros(now()) AS now_us").int64(0, "now_us")
    }

    /// Up to `count` orders due by `dueByMicros` (a pass's start, PostgreSQL's clock: an order
    /// polled in the pass and due again before it ends waits for the next pass), each leased
    /// for `leaseSeconds`: (order number, attempts so far).
    package func claim(_ count: Int, dueByMicros: Int64, leaseSeconds: Int64, on c: PostgresConnection) throws -> [(String, Int)] {
        let rows = try c.query(Self.claimSQL, [.int(maxAgeSeconds), .int(Int64(count)), .int(leaseSeconds), statusArray, .int(dueByMicros)])
        return try (0..<rows.count).map { r in (try rows.string(r, "merchant_order_no"), Int(try rows.int64(r, "attempts"))) }
    }

    /// Gives claimed orders back (a stop in the middle of a claim): due again at once.
    package func release(_ numbers: [String], on c: PostgresConnection) throws {
        try c.query("UPDATE ledger.polls SET next_poll_at = now(), leased_until = NULL WHERE merchant_order_no = ANY($1::text[])",
                    [.text("{" + numbers.map { "\"" + $0 + "\"" }.joined(separator: ",") + "}")])   // order numbers need no escaping
    }

    /// Records an attempt and when the order is due next: `afterSeconds` later, or, when its
    /// backoff was restarted while it was claimed (its attempts are no longer the `claimedAttempts`
    /// it was claimed with), `restartDelaySeconds` later. `failure` is the redacted reason.
    package func reschedule(_ number: String, claimedAttempts: Int, afterSeconds: Int64, failure: String?,
                            on c: PostgresConnection) throws {
        try c.query(Self.rescheduleSQL, [.text(number), .int(afterSeconds), .optional(failure), .int(Int64(claimedAttempts)),
                                         .int(restartDelaySeconds)])
    }

    /// Orders a poll can still change: web3, a status in `$3`, created within the horizon;
    /// those updated since `$1` and not yet enrolled are due at once. One enrolled already
    /// whose status is not the one last seen starts its backoff again: no attempts, and
    /// due at most `$4` seconds from now (sooner if it was due sooner); a row a poller holds
    /// keeps its time, and that poller schedules it from the restart (`rescheduleSQL`).
    /// The rows are taken in order-number order, so two passes lock them in one order.
    static let enrolSQL = """
        INSERT INTO ledger.polls AS p (merchant_order_no, next_poll_at, status_seen)
        SELECT o.merchant_order_no, now(), o.status
          FROM ledger.orders o
         WHERE o.updated_at >= ledger.from_micros($1)
           AND o.provider = 'web3' AND o.status = ANY($3::smallint[])
           AND coalesce(o.created_at, o.updated_at) >= now() - make_interval(secs => $2)
         ORDER BY o.merchant_order_no
        ON CONFLICT (merchant_order_no) DO UPDATE
           SET attempts = 0, status_seen = excluded.status_seen,
               next_poll_at = CASE WHEN p.leased_until > now() THEN p.next_poll_at
                                   ELSE least(p.next_poll_at, now() + make_interval(secs => $4)) END
         WHERE p.status_seen IS DISTINCT FROM excluded.status_seen
        """

    /// Due rows whose order no poll can change any more (paid, expired, too old).
    static let forgetSQL = """
        DELETE FROM ledger.polls p
         USING ledger.orders o
         WHERE p.next_poll_at <= now() AND o.merchant_order_no = p.merchant_order_no
           AND NOT (o.provider = 'web3' AND o.status = ANY($2::smallint[])
                    AND coalesce(o.created_at, o.updated_at) >= now() - make_interval(secs => $1))
        """

    /// The due orders, oldest due first, each leased for `$3` seconds.
    static let claimSQL = """
        WITH due AS (
            SELECT p.merchant_order_no
              FROM ledger.polls p
              JOIN ledger.orders o ON o.merchant_order_no = p.merchant_order_no
             WHERE p.next_poll_at <= ledger.from_micros($5)
               AND o.provider = 'web3' AND o.status = ANY($4::smallint[])
               AND coalesce(o.created_at, o.updated_at) >= now() - make_interval(secs => $1)
             ORDER BY p.next_poll_at, p.merchant_order_no
             LIMIT $2
               FOR UPDATE OF p SKIP LOCKED
        )
        UPDATE ledger.polls p
           SET next_poll_at = now() + make_interval(secs => $3), leased_until = now() + make_interval(secs => $3)
          FROM due
         WHERE p.merchant_order_no = due.merchant_order_no
        RETURNING p.merchant_order_no, p.attempts
        """

    static let rescheduleSQL = """
        UPDATE ledger.polls
           SET attempts = attempts + 1, last_polled_at = now(), last_error = $3, leased_until = NULL,
               next_poll_at = now() + make_interval(secs => CASE WHEN attempts = $4::integer THEN $2::float8 ELSE $5::float8 END)
         WHERE merchant_order_no = $1
        """
}
