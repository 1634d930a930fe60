import LedgerCore

/// A stored bearer token: never the token itself, only its SHA-256.
public struct TokenRecord: Sendable, Equatable {
    public var name: String
    public var role: String
    /// A client token's scope: one order, or one enrollment (Migrations 007, 027).
    public var orderNo: String?
    public var enrollmentRef: String?
    public var createdAt: Timestamp
    public var expiresAt: Timestamp?
    public var revokedAt: Timestamp?

    public func isValid(at now: Timestamp) -> Bool {
        revokedAt == nil && (expiresAt.map { now < $0 } ?? true)
    }
}

public enum TokenStoreError: Error, CustomStringConvertible, Equatable {
    case nameTaken(String)
    case unknownName(String)

    public var description: String {
        switch self {
        case .nameTaken(let n):
            return "a token named \(n) exists or existed: names are never reused, revoked ones included (a correction names its token), so choose another name"
        case .unknownName(let n): return "no active token is named \(n)"
        }
    }
}

/// `ledger.tokens`: create, look up by hash, list, revoke.
public struct TokenStore: Sendable {
    public init() {}

    private static let columns = """
        name, role, order_no, enrollment_ref, ledger.micros(created_at) AS created_us,
        ledger.micros(expires_at) AS expires_us, ledger.micros(revoked_at) AS revoked_us
        """

    public func create(name: String, role: String, tokenHash: [UInt8], orderNo: String? = nil,
                       enrollmentRef: String? = nil, expiresAt: Timestamp? = nil, on connection: PostgresConnection) throws {
        do {
            try connection.query("""
                INSERT INTO ledger.tokens (name, role, token_hash, order_no, enrollment_ref, expires_at)
                VALUES ($1, $2, $3, $4, $5, 'epoch'::timestamptz + ($6 || ' microseconds')::interval)
                """, [.text(name), .text(role), .bytes(tokenHash), .optional(orderNo), .optional(enrollmentRef),
                      .optional(expiresAt.map { String($0.microseconds) })])
        } catch let error as PostgresError where error.sqlState == "23505" {
            throw TokenStoreError.nameTaken(name)
        }
    }

    /// The token whose hash this is, valid or not (the caller checks validity).
    public func find(hash: [UInt8], on connection: PostgresConnection) throws -> TokenRecord? {
        let result = try connection.query("SELECT \(Self.columns) FROM ledger.tokens WHERE token_hash = $1", [.bytes(hash)])
        return try Self.records(result).first
    }

    public func list(on connection: PostgresConnection) throws -> [TokenRecord] {
        try Self.records(connection.query("SELECT \(Self.columns) FROM ledger.tokens ORDER BY created_at, name"))
    }

    public func revoke(name: String, on connection: PostgresConnection) throws {
        let result = try connection.query(
            "UPDATE ledger.tokens SET revoked_at = now() WHERE name = $1 AND revoked_at IS NULL", [.text(name)])
        if result.affectedRows == 0 { throw TokenStoreError.unknownName(name) }
    }

    static func records(_ result: QueryResult) throws -> [TokenRecord] {
        try (0..<result.count).map { r in
            TokenRecord(
                name: try result.string(r, "name"),
                role: try result.string(r, "role"),
                orderNo: try result.value(r, "order_no"),
                enrollmentRef: try result.value(r, "enrollment_ref"),
                createdAt: Timestamp(microseconds: try result.int64(r, "created_us")),
                expiresAt: try result.value(r, "expires_us").flatMap(Int64.init).map(Timestamp.init(microseconds:)),
                revokedAt: try result.value(r, "revoked_us").flatMap(Int64.init).map(Timestamp.init(microseconds:)))
        }
    }
}
