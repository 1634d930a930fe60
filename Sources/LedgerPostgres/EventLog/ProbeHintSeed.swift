/// What a restarted writer should know of the store before it takes keys and
/// streams for new again (`ProbeHints`): the streams of the most recently updated
/// orders and enrollments, and the idempotency keys of the newest events.
///
/// Read in pages (keyset), so the service's memory stays small however large the
/// ledger. Anything beyond these limits (an order untouched for long, the
/// redelivery of an old event) costs at most one miss: a rolled-back batch, tried
/// again with every probe.
public struct ProbeHintSeed: Sendable {
    /// Streams of this many most recently updated orders, and as many enrollments.
    public var streamLimit: Int
    /// Keys of this many newest events.
    public var keyLimit: Int
    /// Rows a query.
    public var pageSize: Int

    public init(streamLimit: Int = 1_000_000, keyLimit: Int = 1 << 17, pageSize: Int = 10_000) {
        self.streamLimit = max(0, streamLimit)
        self.keyLimit = max(0, keyLimit)
        self.pageSize = max(1, pageSize)
    }

    /// Everything the seed reads, in memory (for tests and small ledgers).
    public func read(on connection: PostgresConnection) throws -> (keys: [String], streams: [String]) {
        var keys: [String] = [], streams: [String] = []
        _ = try read(on: connection, key: { keys.append($0) }, stream: { streams.append($0) })
        return (keys, streams)
    }

    /// Hands each stream and key to `stream` and `key` as its page arrives, so nothing
    /// but a page is held. `shouldStop` is asked before every page; answers false when
    /// it stopped the read.
    public func read(on connection: PostgresConnection, shouldStop: () -> Bool = { false },
                     key: (String) -> Void, stream: (String) -> Void) throws -> Bool {
        var streams = 0
        var after: (updatedAt: String, no: String)?
        while streams < streamLimit {
            if shouldStop() { return false }
            let limit = SQLValue.int(Int64(min(pageSize, streamLimit - streams)))
            let page: QueryResult
            if let after {
                page = try connection.query(Self.olderOrdersSQL, [.text(after.updatedAt), .text(after.no), limit])
            } else {
                page = try connection.query(Self.newestOrdersSQL, [limit])
            }
            for row in 0..<page.count { stream("order-" + (try page.string(row, "merchant_order_no"))) }
            streams += page.count
            guard page.count == pageSize else { break }
            after = (try page.string(page.count - 1, "updated_text"), try page.string(page.count - 1, "merchant_order_no"))
        }
        var enrollments = 0
        var lastRef: String?
        while enrollments < streamLimit {
            if shouldStop() { return false }
            let limit = SQLValue.int(Int64(min(pageSize, streamLimit - enrollments)))
            let page = try connection.query(Self.enrollmentsSQL, [lastRef.map(SQLValue.text) ?? .null, limit])
            for row in 0..<page.count { stream("enrollment-" + (try page.string(row, "enrollment_ref"))) }
            enrollments += page.count
            guard page.count == pageSize else { break }
            lastRef = try page.string(page.count - 1, "enrollment_ref")
        }
        var keys = 0
        var position = try connection.query(Self.firstKeyPositionSQL, [.int(Int64(keyLimit))]).int64(0, "after")
        while keys < keyLimit {
            if shouldStop() { return false }
            let page = try connection.query(Self.keysSQL, [.int(position), .int(Int64(min(pageSize, keyLimit - keys)))])
            for row in 0..<page.count { key(try page.string(row, "idempotency_key")) }
            keys += page.count
            guard page.count == pageSize else { break }
            position = try page.int64(page.count - 1, "position")
        }
        return true
    }

    // The orders' pages walk `orders_updated (updated_at, merchant_order_no)` backwards.
    static let newestOrdersSQL = """
        SELECT merchant_order_no, updated_at::text AS updated_text
          FROM ledger.orders
         ORDER BY updated_at DESC, merchant_order_no DESC
         LIMIT $1
        """
    static let olderOrdersSQL = """
        SELECT merchant_order_no, updated_at::text AS updated_text
          FROM ledger.orders
         WHERE (updated_at, merchant_order_no) < ($1::timestamptz, $2::text)
         ORDER BY updated_at DESC, merchant_order_no DESC
         LIMIT $3
        """
    static let enrollmentsSQL = """
        SELECT enrollment_ref
          FROM ledger.enrollments
         WHERE $1::text IS NULL OR enrollment_ref > $1::text
         ORDER BY enrollment_ref
         LIMIT $2
        """
    /// The position after which the newest `$1` events lie.
    static let firstKeyPositionSQL = """
        SELECT greatest(coalesce(max(position), 0) - $1, 0) AS after FROM ledger.events
        """
    static let keysSQL = """
        SELECT position, idempotency_key
          FROM ledger.events
         WHERE position > $1
         ORDER BY position
         LIMIT $2
        """
}
