import LedgerCore
import LedgerHTTP
import LedgerPostgres

/// Readiness, metrics and client tokens: the operational edges of the service.
struct Operations: Sendable {
    let pool: ConnectionPool
    let migrator: Migrator?
    let metrics: MetricsRegistry
    let issuer = TokenIssuer()

    /// 200 when the database answers and every migration is applied; 503 otherwise.
    func readiness() -> HTTPResponse {
        do {
            let status = try pool.withConnection { c -> MigrationStatus? in
                try c.query("SELECT 1")
                return try migrator?.status(c)
            }
            if let status, !status.isCurrent {
                return .problem(status: 503, title: "Not ready",
                                detail: "\(status.pending.count) migration(s) pending: run ledger migrate",
                                headers: [("Retry-After", "5")])
            }
            return .json(200, Array(#"{"status":"ready"}"#.utf8))
        } catch {
            let detail = ServiceError.from(error).status == 503
                ? "the database cannot be reached"
                : "the readiness check failed: \(error)"
            return .problem(status: 503, title: "Not ready", detail: detail, headers: [("Retry-After", "2")])
        }
    }

    func metricsResponse() -> HTTPResponse {
        .text(200, metrics.render(), contentType: MetricsRegistry.contentType)
    }

    /// A token for an app to relay one order's callbacks, or one enrollment's, valid one
    /// hour unless `ttlSeconds` says less. An order must exist (it is registered before
    /// its app starts); an enrollment need not (its first callback starts it).
    func mintClientToken(_ scope: ClientScope, _ request: HTTPRequest, now: Timestamp) throws -> JSONValue {
        var ttl: Int64 = 3600
        if !request.body.isEmpty {
            let body = try JSONValue.parse(request.body)
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
