import LedgerCore
import LedgerPostgres

/// The five roles of http-api.md.
public enum Role: String, Sendable, CaseIterable {
    case ingest, support, auditor, accountant, client
}

/// Makes bearer tokens and checks them. A token is `lgr_` + 64 hex digits of
/// randomness; only its SHA-256 is stored.
public struct TokenIssuer: Sendable {
    public let store = TokenStore()

    public init() {}

    public static func newToken() -> String { "lgr_" + Hex.encode(Crypto.randomBytes(32)) }

    public static func hash(_ token: String) -> [UInt8] { Crypto.sha256(Array(token.utf8)) }

    /// Creates a token and returns it: the only time it is ever seen in clear.
    public func create(role: Role, name: String, orderNo: String? = nil, enrollmentRef: String? = nil,
                       expiresAt: Timestamp?, on connection: PostgresConnection) throws -> String {
        let token = Self.newToken()
        try store.create(name: name, role: role.rawValue, tokenHash: Self.hash(token), orderNo: orderNo,
                         enrollmentRef: enrollmentRef, expiresAt: expiresAt, on: connection)
        return token
    }

    /// The valid token record for a presented bearer token, or nil.
    public func authenticate(_ token: String, now: Timestamp, on connection: PostgresConnection) throws -> TokenRecord? {
        guard token.hasPrefix("lgr_"), token.utf8.count == 68 else { return nil }
        guard let record = try store.find(hash: Self.hash(token), on: connection), record.isValid(at: now) else { return nil }
        return record
    }
}
