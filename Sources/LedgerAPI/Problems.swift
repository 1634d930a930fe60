import LedgerCore
import LedgerHTTP
import LedgerService

/// Every service error as the RFC 9457 problem it is answered with: the one place
/// that knows HTTP statuses and titles (a problem of type `about:blank` is titled with
/// its status's reason phrase, as RFC 9457 asks).
extension ServiceError {
    var status: Int {
        switch self {
        case .badRequest: return 400
        case .invalidInput(let e): return e.httpStatus
        case .unauthenticated: return 401
        case .forbidden: return 403
        case .notFound: return 404
        case .conflict: return 409
        case .tooLarge: return 413
        case .tooMany: return 429
        case .unavailable: return 503
        case .notImplemented: return 501
        case .internalError, .integrityFailure: return 500
        }
    }

    var response: HTTPResponse {
        switch self {
        case .badRequest(let detail): return .problem(status: 400, title: "Bad Request", detail: detail)
        case .invalidInput(let e): return .problem(status: e.httpStatus, title: e.title, detail: e.message,
                                                   type: "urn:ledger:problem:" + e.reason)
        case .unauthenticated(let detail):
            // RFC 9110: a 401 names the scheme it wants.
            return .problem(status: 401, title: "Unauthorized", detail: detail, headers: [("WWW-Authenticate", #"Bearer realm="ledger""#)])
        case .forbidden(let detail): return .problem(status: 403, title: "Forbidden", detail: detail)
        case .notFound(let detail): return .problem(status: 404, title: "Not Found", detail: detail)
        case .conflict(let detail): return .problem(status: 409, title: "Conflict", detail: detail)
        case .tooLarge(let detail): return .problem(status: 413, title: "Content Too Large", detail: detail)
        case .tooMany(let detail): return .problem(status: 429, title: "Too Many Requests", detail: detail)
        case .unavailable(let detail):
            return .problem(status: 503, title: "Service Unavailable", detail: detail, headers: [("Retry-After", "2")])
        case .notImplemented(let detail): return .problem(status: 501, title: "Not Implemented", detail: detail)
        case .integrityFailure(let detail):
            // Not the caller's fault and not worth a retry: the stored log fails its own hash
            // chain (docs/decisions.md). The detail names only the position, no content.
            return .problem(status: 500, title: "Ledger integrity failure", detail: detail,
                            type: "urn:ledger:problem:integrity-failure")
        case .internalError:
            // The detail stays in the log; the caller gets no internals.
            return .problem(status: 500, title: "Internal Server Error", detail: "the ledger failed to handle this request; it has been logged")
        }
    }
}

extension CoreError {
    /// 401 for problems with who sent the request, 400 for what it says.
    var httpStatus: Int { isUnauthenticated ? 401 : 400 }

    /// A short problem+json `title`.
    var title: String {
        if isUnauthenticated { return "Delivery not authenticated" }
        switch self {
        case .notUTF8, .invalidJSON: return "Body is not valid JSON"
        case .providerQueryFailed: return "Provider query failed"
        case .invalidEvent: return "Stored event unreadable"
        default: return "Invalid request"
        }
    }
}
