import Foundation
import LedgerCore
import LedgerPostgres

/// The rejected deliveries as auditors read them over HTTP (http-api.md,
/// `GET /v1/quarantine` and `GET /v1/quarantine/{id}`): newest first, paged by time.
package struct QuarantineQueries: Sendable {
    package let pool: ConnectionPool
    let store = QuarantineStore()
    package static let defaultLimit = 50
    package static let maxLimit = 500

    package init(pool: ConnectionPool) { self.pool = pool }

    /// `{deliveries: [...], nextBefore}`: the deliveries received before `before`, newest
    /// first. `nextBefore` is the time to pass as `before` for the next page (null on the last).
    /// Deliveries that share the page's last time all come in this page, so that paging by
    /// time alone never skips one; such a page may hold a few more than `limit`.
    package func list(before: Timestamp?, limit: Int) throws -> JSONValue {
        // One connection for every read: a route waits for the pool once, within its timeout.
        let (rows, more) = try pool.withConnection { c -> ([QuarantineStore.Kept], Bool) in
            var rows = try store.list(before: before, limit: limit + 1, on: c)
            if rows.count > limit {
                rows.removeLast()
                let last = rows[rows.count - 1]
                rows += try store.list(at: last.receivedAt, belowID: last.id, limit: Self.maxLimit, on: c)
            }
            let more = try rows.last.map { try !store.list(before: $0.receivedAt, limit: 1, on: c).isEmpty } ?? false
            return (rows, more)
        }
        let next: JSONValue = more ? .string(rows[rows.count - 1].receivedAt.rfc3339) : .null
        return .object([("deliveries", .array(try rows.map(Self.json))), ("nextBefore", next)])
    }

    /// One delivery with its body (base64); 404 when there is none with that id.
    package func delivery(_ id: Int64) throws -> JSONValue {
        guard let kept = try pool.withConnection({ try store.delivery(id: id, on: $0) }) else {
            throw ServiceError.notFound("no quarantined delivery \(id)")
        }
        guard case .object(var fields) = try Self.json(kept) else { return .null }
        fields.append(("body", .string(Data(kept.raw ?? []).base64EncodedString())))
        return .object(fields)
    }

    static func json(_ k: QuarantineStore.Kept) throws -> JSONValue {
        .object([("id", .integer(k.id)), ("receivedAt", .string(k.receivedAt.rfc3339)), ("provider", .string(k.provider)),
                 ("path", .string(k.path)), ("sourceAddress", .string(k.remoteAddress)), ("reason", .string(k.reason)),
                 ("detail", .string(k.detail)), ("requestId", .string(k.requestID)), ("size", .integer(k.size)),
                 ("headers", try JSONValue.parse(stored: k.headers))])
    }

    /// Reads `before` and `limit` from the query string; a value out of range is the caller's mistake.
    package static func page(before: String?, limit: String?) throws -> (before: Timestamp?, limit: Int) {
        var page: (before: Timestamp?, limit: Int) = (nil, defaultLimit)
        if let before {
            page.before = try TimeQuery.parse(before, name: "before")
        }
        if let limit {
            guard let n = Int(limit), (1...maxLimit).contains(n) else {
                throw ServiceError.badRequest("limit is a whole number from 1 to \(maxLimit)")
            }
            page.limit = n
        }
        return page
    }

    /// Reads a `{id}`: a whole number from 1.
    package static func id(_ text: String) throws -> Int64 {
        guard text.utf8.allSatisfy({ (48...57).contains($0) }), let n = Int64(text), n >= 1 else {
            throw ServiceError.badRequest("a quarantined delivery's id is a whole number from 1")
        }
        return n
    }
}
