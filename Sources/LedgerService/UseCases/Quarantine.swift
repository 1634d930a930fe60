import LedgerCore
import LedgerHTTP
import LedgerPostgres

/// Rejected deliveries (bad, missing or stale signatures): kept byte for
/// byte in ledger.quarantine with secrets redacted from the headers, counted
/// in `ledger_rejected_deliveries_total{reason}`, never written as events.
struct Quarantine: Sendable {
    let pool: ConnectionPool
    let rejected: Counter
    let logger: Logger

    /// Headers whose values may be credentials or signatures, by name or by a part of it.
    static let secretHeaders: Set<String> = ["authorization", "proxy-authorization", "cookie", "set-cookie"]
    static let secretWords = ["key", "secret", "token", "signature", "password", "auth", "session"]

    static func isSecret(_ name: String) -> Bool {
        secretHeaders.contains(name) || secretWords.contains { name.contains($0) }
    }

    static func redacted(_ headers: [String: String]) -> JSONValue {
        .object(headers.sorted { $0.key < $1.key }.map { name, value in
            (name, .string(isSecret(name) ? "[redacted]" : value))
        })
    }

    func keep(_ request: HTTPRequest, provider: String, error rejection: CoreError) {
        rejected.increment(rejection.reason)
        do {
            _ = try pool.withConnection { c in
                try c.query("""
                    INSERT INTO ledger.quarantine (provider, path, remote_address, reason, detail, request_id, headers, raw)
                    VALUES ($1, $2, $3, $4, $5, $6, $7::jsonb, $8)
                    """, [.text(provider), .text(request.path), .text(request.remoteAddress), .text(rejection.reason),
                          .text(rejection.message), .text(request.requestID),
                          .text(JSONSerializer.string(Self.redacted(request.headers))), .bytes(request.body)])
            }
        } catch {
            // The 401 stands either way; losing the quarantine copy is logged, not fatal.
            logger.error("could not quarantine a rejected delivery", [("requestId", .string(request.requestID)),
                                                                      ("reason", .string("\(error)"))])
        }
    }
}
