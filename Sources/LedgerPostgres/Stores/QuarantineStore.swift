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
