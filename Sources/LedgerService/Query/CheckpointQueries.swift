import LedgerCore
import LedgerPostgres

/// The signed checkpoint notes as auditors read them over HTTP (http-api.md,
/// `GET /v1/ledger/checkpoints` and `checkpoint` in `GET /v1/ledger/head`).
package struct CheckpointQueries: Sendable {
    package let pool: ConnectionPool
    let store = CheckpointStore()
    package static let defaultLimit = 100
    package static let maxLimit = 1000

    package init(pool: ConnectionPool) { self.pool = pool }

    /// `{checkpoints: [...], nextCursor}`, oldest first; `nextCursor` is the position to pass
    /// as `after` for the next page, null on the last one.
    package func list(after: Int64, limit: Int) throws -> JSONValue {
        let page = try pool.withConnection { try store.list(after: after, limit: limit + 1, on: $0) }
        let shown = page.prefix(limit)
        let next: JSONValue = page.count > limit ? .integer(shown.last!.position) : .null
        return .object([("checkpoints", .array(shown.map(Self.json))), ("nextCursor", next)])
    }

    /// The newest note, when there is one.
    package func newest(on connection: PostgresConnection) throws -> JSONValue? {
        try store.newest(on: connection).map(Self.json)
    }

    static func json(_ c: StoredCheckpoint) -> JSONValue {
        .object([("position", .integer(c.position)), ("hash", .string(Hex.encode(c.hash))),
                 ("signedAt", .string(c.signedAt.rfc3339)), ("note", .string(c.note))])
    }

    /// Reads `after` and `limit` from the query string; a value out of range is the caller's mistake.
    package static func page(after: String?, limit: String?) throws -> (after: Int64, limit: Int) {
        var page: (after: Int64, limit: Int) = (0, defaultLimit)
        if let after {
            guard let n = Int64(after), n >= 0 else { throw ServiceError.badRequest("after is a position: a whole number from 0") }
            page.after = n
        }
        if let limit {
            guard let n = Int(limit), (1...maxLimit).contains(n) else {
                throw ServiceError.badRequest("limit is a whole number from 1 to \(maxLimit)")
            }
            page.limit = n
        }
        return page
    }
}
