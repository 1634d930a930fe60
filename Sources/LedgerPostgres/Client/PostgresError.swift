/// Every way talking to PostgreSQL can fail, each case saying what happened in
/// words an operator can act on. `isUnavailable` tells callers to answer 503.
public enum PostgresError: Error, CustomStringConvertible, Sendable {
    /// The connection string could not be parsed.
    case invalidConnectionString(String)
    /// The server could not be reached or refused the session.
    case connectionFailed(String)
    /// An established connection broke (server restart, network).
    case connectionLost(String)
    /// The server answered with an error: SQLSTATE plus its own message, and the
    /// constraint it names, if any (a unique violation names its index's constraint).
    case server(sqlState: String, message: String, detail: String?, constraint: String? = nil)
    /// No pooled connection became free within the wait limit.
    case poolExhausted(waitedSeconds: Double)
    /// The result did not have the shape the caller expected.
    case unexpectedResult(String)

    public var description: String {
        switch self {
        case .invalidConnectionString(let m): return "invalid DATABASE_URL: \(m)"
        case .connectionFailed(let m): return "cannot connect to PostgreSQL: \(m)"
        case .connectionLost(let m): return "lost the connection to PostgreSQL: \(m)"
        case .server(let state, let message, let detail, _):
            return "PostgreSQL error \(state): \(message)" + (detail.map { " (\($0))" } ?? "")
        case .poolExhausted(let s): return "no database connection became free within \(s) s"
        case .unexpectedResult(let m): return "unexpected result from PostgreSQL: \(m)"
        }
    }

    /// True when the database cannot be reached right now (answer 503, retry later).
    public var isUnavailable: Bool {
        switch self {
        case .connectionFailed, .connectionLost, .poolExhausted: return true
        case .server(let state, _, _, _):
            // Class 08 connection exceptions, 57P0x admin/crash shutdown, 53 resources, and
            // 57014 a statement cancelled (the statement timeout: the database is too slow or
            // locked right now; worth a retry, not a 500).
            return state.hasPrefix("08") || state.hasPrefix("57P") || state.hasPrefix("53") || state == "57014"
        default: return false
        }
    }

    public var sqlState: String? {
        if case .server(let state, _, _, _) = self { return state }
        return nil
    }

    /// The constraint a server error names (PG_DIAG_CONSTRAINT_NAME), if any.
    public var constraint: String? {
        if case .server(_, _, _, let constraint) = self { return constraint }
        return nil
    }
}
