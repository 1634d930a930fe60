import LedgerCore
import LedgerPostgres

/// The signed checkpoint notes as auditors read them over HTTP (http-api.md,
/// `GET /v1/ledger/checkpoints` and `checkpoint` in `GET /v1/ledger/head`). Each is
/// answered with the position, hash and time its note signed, read from the note (a row's
/// columns are only copies); a row whose note is not a checkpoint note, or, with the
/// checkpoint key configured, does not verify under it (another key's, altered, written by
/// someone with the database's keys), is not served as a signed note.
package struct CheckpointQueries: Sendable {
    package let pool: ConnectionPool
    /// The public half of `LEDGER_CHECKPOINT_KEY`, when the service has it.
    package let publicKey: Ed25519PublicKey?
    let store = CheckpointStore()
    package static let defaultLimit = 100
    package static let maxLimit = 1000
    /// Rows looked at, newest first, for the newest note that is served, before giving up.
    static let newestTries = 1000

    package init(pool: ConnectionPool, publicKey: Ed25519PublicKey? = nil) {
        self.pool = pool
        self.publicKey = publicKey
    }

    /// `{checkpoints: [...], nextCursor}`, oldest first; `nextCursor` is the position to pass
    /// as `after` for the next page, null on the last one. A page may hold fewer than `limit`
    /// notes when rows were passed over.
    package func list(after: Int64, limit: Int) throws -> JSONValue {
        let page = try pool.withConnection { try store.list(after: after, limit: limit + 1, on: $0) }
        let read = page.prefix(limit)
        let next: JSONValue = page.count > limit ? .integer(read.last!.position) : .null
        return .object([("checkpoints", .array(read.compactMap(served))), ("nextCursor", next)])
    }

    /// The newest note served, when there is one.
    package func newest(on connection: PostgresConnection) throws -> JSONValue? {
        var before: Int64?
        var looked = 0
        while looked < Self.newestTries {
            let page = try store.newestFirst(before: before, limit: 100, on: connection)
            guard let last = page.last else { return nil }
            if let found = page.lazy.compactMap(served).first { return found }
            looked += page.count
            before = last.position
        }
        return nil
    }

    /// The row as served: what its note signed, or nil when it is not served.
    func served(_ c: StoredCheckpoint) -> JSONValue? {
        guard let checkpoint = Checkpoint(text: c.note) else { return nil }
        if let publicKey, !checkpoint.note.verifies(name: checkpoint.body.origin, publicKey: publicKey) { return nil }
        let body = checkpoint.body
        return .object([("position", .integer(body.position)), ("hash", .string(Hex.encode(body.hash))),
                        ("signedAt", .string(body.signedAt.rfc3339)), ("note", .string(c.note))])
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
