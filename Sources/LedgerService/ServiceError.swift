import LedgerCore
import LedgerPostgres

/// Every way a request to the service can fail, in words a caller can act on.
/// LedgerAPI maps each case once to an RFC 9457 problem response.
public enum ServiceError: Error {
    case badRequest(String)
    case invalidInput(CoreError)
    case unauthenticated(String)
    case forbidden(String)
    case notFound(String)
    case conflict(String)
    /// A body within the server's limit but over the route's own (413).
    case tooLarge(String)
    /// A quota spent for good (429, without Retry-After: waiting does not renew it).
    case tooMany(String)
    case unavailable(String)
    case notImplemented(String)
    case internalError(String)
    /// The hash chain is broken below the events a read would fold into state (`ChainBreak`):
    /// it shows nothing, and says so.
    case integrityFailure(String)

    /// Classifies any error thrown below the service.
    public static func from(_ error: Error) -> ServiceError {
        switch error {
        case let e as ServiceError: return e
        case let e as ChainBreak: return .integrityFailure(e.description)
        case let e as CheckpointError:
            return e.contradictsLog ? .integrityFailure(e.description) : .internalError(e.description)
        case let e as CoreError:
            if case .invalidEvent = e { return .internalError(e.description) }   // stored data, not the caller's input
            return e.isUnauthenticated ? .unauthenticated(e.message) : .invalidInput(e)
        case let e as JSONError: return .invalidInput(.invalidJSON(e))
        case is ProbeHintMiss, is HeadMoved, is SkippedRoundTripRefused:
            // Another writer on the same database changed the log while this batch was being
            // written, and the batch's retry met it again: nothing was committed, and the same
            // request a moment later is written (or answered as the duplicate it then is).
            return .unavailable("another writer changed the ledger at the same moment; retry shortly")
        case let e as PostgresError where e.sqlState == "55P03":
            // lock_not_available: a lock wait ran out (an export waits 10 s for the append
            // lock a rebuild's swap holds). Nothing was done; the same request later will do.
            return .unavailable("the ledger is busy (a lock it needs is held, as by a rebuild's swap); retry shortly")
        case let e as PostgresError:
            return e.isUnavailable ? .unavailable("the database cannot be reached right now; retry shortly") : .internalError(e.description)
        default: return .internalError(String(describing: error))
        }
    }
}

extension ServiceError {
    /// True when the fault is the database's absence, not the request: the caller may retry.
    public var isUnavailable: Bool {
        if case .unavailable = self { return true }
        return false
    }
}
