import LedgerCore
import LedgerPostgres
import Synchronization

/// Who is calling: a token's name, role and, for client tokens, its order.
struct Principal: Sendable {
    var name: String
    var role: Role
    var scope: String?
}

/// Checks bearer tokens against their stored hashes. Lookups are cached for a
/// few seconds (by hash, never by token) so reads don't cost an extra query;
/// a revocation therefore takes effect within `cacheSeconds`.
final class Authenticator: Sendable {
    private let pool: ConnectionPool
    private let issuer = TokenIssuer()
    private let cacheSeconds: Int64
    private let cache = Mutex<[String: (TokenRecord, Timestamp)]>([:])

    init(pool: ConnectionPool, cacheSeconds: Int64 = 5) {
        self.pool = pool
        self.cacheSeconds = cacheSeconds
    }

    /// The principal for an `Authorization` header, or `.unauthenticated`.
    func principal(authorization: String?, now: Timestamp) throws -> Principal {
        // The scheme name is case-insensitive (RFC 9110 §11.1).
        guard let header = authorization, header.utf8.count > 7, header.prefix(7).lowercased() == "bearer " else {
            throw ServiceError.unauthenticated("send a bearer token: Authorization: Bearer <token>")
        }
        let token = String(header.dropFirst(7)).trimmingWhitespace
        let key = Hex.encode(TokenIssuer.hash(token))
        let cached = cache.withLock { c -> TokenRecord? in
            guard let (record, fetched) = c[key], now.microseconds - fetched.microseconds < cacheSeconds * 1_000_000 else { return nil }
            return record
        }
        let record: TokenRecord
        if let cached {
            record = cached
        } else {
            guard let found = try pool.withConnection({ try issuer.authenticate(token, now: now, on: $0) }) else {
                throw ServiceError.unauthenticated("the token is unknown, expired or revoked")
            }
            record = found
            cache.withLock { c in
                if c.count > 10_000 { c.removeAll() }
                c[key] = (found, now)
            }
        }
        guard record.isValid(at: now), let role = Role(rawValue: record.role) else {
            throw ServiceError.unauthenticated("the token is unknown, expired or revoked")
        }
        return Principal(name: record.name, role: role, scope: record.orderNo)
    }
}

extension String {
    var trimmingWhitespace: String {
        var s = Substring(self)
        while s.first == " " || s.first == "\t" { s.removeFirst() }
        while s.last == " " || s.last == "\t" { s.removeLast() }
        return String(s)
    }
}
