import LedgerCore
import LedgerPostgres
import Synchronization

/// Who is calling: a token's name, role and, for client tokens, its order or enrollment.
package struct Principal: Sendable {
    package var name: String
    package var role: Role
    package var scope: ClientScope?
}

/// What a client token may reach: one order's callbacks, or one enrollment's.
package enum ClientScope: Sendable, Equatable {
    case order(String)
    case enrollment(String)

    package init?(_ record: TokenRecord) {
        if let no = record.orderNo { self = .order(no) }
        else if let ref = record.enrollmentRef { self = .enrollment(ref) }
        else { return nil }
    }
}

/// Checks bearer tokens against their stored hashes. Lookups are cached for a
/// few seconds (by hash, never by token) so reads don't cost an extra query.
/// `forgetAll` empties the cache: the `TokenChangeListener` calls it when a token
/// changes anywhere, so a revocation takes effect at once while it listens, and
/// within `cacheSeconds` when it cannot.
package final class Authenticator: Sendable {
    private let pool: ConnectionPool
    private let issuer = TokenIssuer()
    private let cacheSeconds: Int64
    /// Cached lookups, and the generation they belong to: a lookup that started
    /// before a `forgetAll` must not put what it read back into the cache.
    private let cache = Mutex<(entries: [String: (TokenRecord, Timestamp)], generation: UInt64)>(([:], 0))

    /// How long a lookup may take in all (a wait for a connection, connecting, the query):
    /// it may run on a polling thread, which serves other connections too, and it comes
    /// before the request's own work within the request timeout. Past it: 503.
    package static let lookupSeconds: Double = 3

    package init(pool: ConnectionPool, cacheSeconds: Int64 = 5) {
        self.pool = pool
        self.cacheSeconds = cacheSeconds
    }

    /// The principal for an `Authorization` header, or `.unauthenticated`.
    package func principal(authorization: String?, now: Timestamp) throws -> Principal {
        // The scheme name is case-insensitive (RFC 9110 §11.1).
        guard let header = authorization, header.utf8.count > 7, header.prefix(7).lowercased() == "bearer " else {
            throw ServiceError.unauthenticated("send a bearer token: Authorization: Bearer <token>")
        }
        let token = String(header.dropFirst(7)).trimmingWhitespace
        let key = Hex.encode(TokenIssuer.hash(token))
        let (cached, generation) = cache.withLock { c -> (TokenRecord?, UInt64) in
            guard let (record, fetched) = c.entries[key], now.microseconds - fetched.microseconds < cacheSeconds * 1_000_000 else {
                return (nil, c.generation)
            }
            return (record, c.generation)
        }
        let record: TokenRecord
        if let cached {
            record = cached
        } else {
            guard let found = try pool.withConnection(within: Self.lookupSeconds, { try issuer.authenticate(token, now: now, on: $0) }) else {
                throw ServiceError.unauthenticated("the token is unknown, expired or revoked")
            }
            record = found
            cache.withLock { c in
                guard c.generation == generation else { return }   // a change arrived meanwhile
                if c.entries.count > 10_000 { c.entries.removeAll() }
                c.entries[key] = (found, now)
            }
        }
        guard record.isValid(at: now), let role = Role(rawValue: record.role) else {
            throw ServiceError.unauthenticated("the token is unknown, expired or revoked")
        }
        return Principal(name: record.name, role: role, scope: ClientScope(record))
    }

    /// Forgets every cached lookup (a token was created, revoked or deleted somewhere).
    package func forgetAll() {
        cache.withLock { c in
            c.entries.removeAll()
            c.generation &+= 1
        }
    }
}

extension String {
    package var trimmingWhitespace: String {
        var s = Substring(self)
        while s.first == " " || s.first == "\t" { s.removeFirst() }
        while s.last == " " || s.last == "\t" { s.removeLast() }
        return String(s)
    }
}
