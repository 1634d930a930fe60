import LedgerCore
import LedgerObservability
import LedgerPostgres

/// Readiness, metrics and client tokens: the operational edges of the service.
package struct Operations: Sendable {
    package let pool: ConnectionPool
    package let migrator: Migrator?
    package let metrics: MetricsRegistry
    package let issuer = TokenIssuer()

    /// Whether the service can take traffic: the database answers and every migration is applied.
    public func readiness() -> Readiness {
        do {
            let status = try pool.withConnection { c -> MigrationStatus? in
                try c.ping()
                return try migrator?.status(c)
            }
            if let status, !status.isCurrent { return .migrationsPending(status.pending.count) }
            return .ready
        } catch {
            return ServiceError.from(error).isUnavailable ? .databaseUnreachable : .checkFailed(String(describing: error))
        }
    }

    /// A token for an app to relay one order's callbacks, or one enrollment's, valid one
    /// hour unless `ttlSeconds` says less. An order must exist (it is registered before
    /// its app starts); an enrollment need not (its first callback starts it).
    public func mintClientToken(_ scope: ClientScope, body: [UInt8], now: Timestamp) throws -> JSONValue {
        var ttl: Int64 = 3600
        if !body.isEmpty {
            let body = try JSONValue.parse(body)
            guard body.objectFields != nil else { throw ServiceError.badRequest("the body must be a JSON object") }
            if let t = body["ttlSeconds"] {
                guard let n = t.int64Value, (1...3600).contains(n) else {
                    throw ServiceError.badRequest("ttlSeconds must be a whole number from 1 to 3600")
                }
                ttl = n
            }
        }
        let expires = Timestamp(microseconds: now.microseconds + ttl * 1_000_000)
        let token = try pool.withConnection { c -> String in
            let suffix = Hex.encode(Crypto.randomBytes(6))
            switch scope {
            case .order(let no):
                guard try OrderReadModel().load(try MerchantOrderNo(no), on: c) != nil else {
                    throw ServiceError.notFound("no order \(no)")
                }
                return try issuer.create(role: .client, name: "client:\(no):\(suffix)", orderNo: no, expiresAt: expires, on: c)
            case .enrollment(let ref):
                return try issuer.create(role: .client, name: "client:enrollment:\(ref):\(suffix)", enrollmentRef: ref,
                                         expiresAt: expires, on: c)
            }
        }
        return .object([("token", .string(token)), ("expiresAt", .string(expires.rfc3339))])
    }
}

/// What readiness found.
public enum Readiness: Sendable, Equatable {
    case ready
    case migrationsPending(Int)
    case databaseUnreachable
    case checkFailed(String)
}
