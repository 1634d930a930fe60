import LedgerCore

/// ledger.quarantine: rejected deliveries, kept byte for byte as evidence (never events).
package struct QuarantineStore: Sendable {
    package init() {}

    /// One rejected delivery; `headers` is a JSON object with secrets already redacted.
    package struct Rejection: Sendable {
        package var provider: String
        package var path: String
        package var remoteAddress: String
        package var reason: String
        package var detail: String
        package var requestID: String
        package var headers: String
        package var raw: [UInt8]

        package init(provider: String, path: String, remoteAddress: String, reason: String, detail: String,
                     requestID: String, headers: String, raw: [UInt8]) {
            self.provider = provider
            self.path = path
            self.remoteAddress = remoteAddress
            self.reason = reason
            self.detail = detail
            self.requestID = requestID
            self.headers = headers
            self.raw = raw
        }
    }

    package func keep(_ r: Rejection, on c: PostgresConnection) throws {
        try c.query("""
            INSERT INTO ledger.quarantine (provider, path, remote_address, reason, detail, request_id, headers, raw)
            VALUES ($1, $2, $3, $4, $5, $6, $7::jsonb, $8)
            """, [.text(r.provider), .text(r.path), .text(r.remoteAddress), .text(r.reason), .text(r.detail),
                  .text(r.requestID), .text(r.headers), .bytes(r.raw)])
    }

    /// One kept delivery as auditors read it (GET /v1/quarantine); `raw` only when asked for.
    package struct Kept: Sendable {
        package var id: Int64
        package var receivedAt: Timestamp
        package var provider: String
        package var path: String
        package var remoteAddress: String
        package var reason: String
        package var detail: String
        package var requestID: String
        /// The redacted headers as the jsonb text PostgreSQL prints.
        package var headers: String
        package var size: Int64
        package var raw: [UInt8]?
    }

    /// Newest first: the deliveries received before `before` (all when nil), at most `limit`.
    package func list(before: Timestamp?, limit: Int, on c: PostgresConnection) throws -> [Kept] {
        try Self.rows(c.query("""
            SELECT \(Self.columns) FROM ledger.quarantine
             WHERE received_at < ledger.from_micros($1)
             ORDER BY received_at DESC, id DESC LIMIT $2
            """, [.int(before?.microseconds ?? Self.endOfTime), .int(Int64(limit))]), withRaw: false)
    }

    /// The deliveries received at exactly `at` with an id below `id`, newest first: the rest of
    /// a page whose last row shares its time with the next one.
    package func list(at: Timestamp, belowID id: Int64, limit: Int, on c: PostgresConnection) throws -> [Kept] {
        try Self.rows(c.query("""
            SELECT \(Self.columns) FROM ledger.quarantine
             WHERE received_at = ledger.from_micros($1) AND id < $2
             ORDER BY id DESC LIMIT $3
            """, [.int(at.microseconds), .int(id), .int(Int64(limit))]), withRaw: false)
    }

    /// One delivery with its body; nil when there is none with that id.
    package func delivery(id: Int64, on c: PostgresConnection) throws -> Kept? {
        try Self.rows(c.query("SELECT \(Self.columns), raw FROM ledger.quarantine WHERE id = $1", [.int(id)]), withRaw: true).first
    }

    /// 10000-01-01T00:00:00Z: after every time RFC 3339 can write, within timestamptz.
    private static let endOfTime: Int64 = 253_402_300_800_000_000

    private static let columns = """
        id, ledger.micros(received_at) AS received_us, provider, path, remote_address, reason, detail, request_id,
        headers::text AS headers, octet_length(raw)::bigint AS size
        """

    private static func rows(_ r: QueryResult, withRaw: Bool) throws -> [Kept] {
        try (0..<r.count).map { i in
            Kept(id: try r.int64(i, "id"), receivedAt: Timestamp(microseconds: try r.int64(i, "received_us")),
                 provider: try r.string(i, "provider"), path: try r.string(i, "path"),
                 remoteAddress: try r.string(i, "remote_address"), reason: try r.string(i, "reason"),
                 detail: try r.string(i, "detail"), requestID: try r.string(i, "request_id"),
                 headers: try r.string(i, "headers"), size: try r.int64(i, "size"),
                 raw: withRaw ? (try r.bytes(i, "raw") ?? []) : nil)
        }
    }

    /// The table's size on disk (table, indexes and TOAST), which the quarantine's budget measures.
    package func sizeBytes(on c: PostgresConnection) throws -> Int64 {
        try c.query("SELECT pg_total_relation_size('ledger.quarantine') AS bytes").int64(0, "bytes")
    }

    /// Deletes the deliveries received before `before`; returns how many.
    package func delete(receivedBefore before: Timestamp, on c: PostgresConnection) throws -> Int {
        try c.query("DELETE FROM ledger.quarantine WHERE received_at < ledger.from_micros($1)", [.int(before.microseconds)]).affectedRows
    }

    /// Rewrites the table so its size shrinks; it is locked meanwhile.
    package func compact(on c: PostgresConnection) throws {
        try c.query("VACUUM (FULL) ledger.quarantine")
    }
}
