import LedgerCore
import LedgerHTTP
import LedgerPostgres

/// Every way a request to the service can fail, in words a caller can act on.
/// Mapped once to an RFC 9457 problem response.
enum ServiceError: Error {
    case badRequest(String)
    case invalidInput(CoreError)
    case unauthenticated(String)
    case forbidden(String)
    case notFound(String)
    case conflict(String)
    case unavailable(String)
    case notImplemented(String)
    case internalError(String)

    /// Classifies any error thrown below the service.
    static func from(_ error: Error) -> ServiceError {
        switch error {
        case let e as ServiceError: return e
        case let e as CoreError:
            if case .invalidEvent = e { return .internalError(e.description) }   // stored data, not the caller's input
            return e.isUnauthenticated ? .unauthenticated(e.message) : .invalidInput(e)
        case let e as JSONError: return .invalidInput(.invalidJSON(e))
        case let e as PostgresError:
            return e.isUnavailable ? .unavailable("the database cannot be reached right now; retry shortly") : .internalError(e.description)
        default: return .internalError(String(describing: error))
        }
    }

    var status: Int {
        switch self {
        case .badRequest, .invalidInput: return 400
        case .unauthenticated: return 401
        case .forbidden: return 403
        case .notFound: return 404
        case .conflict: return 409
        case .unavailable: return 503
        case .notImplemented: return 501
        case .internalError: return 500
        }
    }

    var response: HTTPResponse {
        switch self {
        case .badRequest(let detail): return .problem(status: 400, title: "Bad request", detail: detail)
        case .invalidInput(let e): return .problem(status: e.httpStatus, title: e.title, detail: e.message,
                                                   type: "urn:ledger:problem:" + e.reason)
        case .unauthenticated(let detail): return .problem(status: 401, title: "Unauthorized", detail: detail)
        case .forbidden(let detail): return .problem(status: 403, title: "Forbidden", detail: detail)
        case .notFound(let detail): return .problem(status: 404, title: "Not found", detail: detail)
        case .conflict(let detail): return .problem(status: 409, title: "Conflict", detail: detail)
        case .unavailable(let detail):
            return .problem(status: 503, title: "Service unavailable", detail: detail, headers: [("Retry-After", "2")])
        case .notImplemented(let detail): return .problem(status: 501, title: "Not implemented", detail: detail)
        case .internalError:
            // The detail stays in the log; the caller gets no internals.
            return .problem(status: 500, title: "Internal error", detail: "the ledger failed to handle this request; it has been logged")
        }
    }
}
