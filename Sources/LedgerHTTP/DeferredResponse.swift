/// How a deferred handler (see `HTTPServer.init`'s `deferred`) took a request.
public enum DeferredStart: Sendable {
    /// It arranged for `Responder.respond` to be called later, from any thread.
    case pending
    /// It will not handle this request: the ordinary handler runs on a worker thread.
    case declined
}

/// The way back to a suspended connection for a handler that answers later:
/// the request waits without a thread (for example on a group commit), and
/// `respond` resumes its connection with the answer.
///
/// The first of `respond`, the request timeout and shutdown wins; the others
/// find nothing to do (the registry resumes each connection once).
public final class Responder: Sendable {
    private let suspensions: SuspensionRegistry
    private let context: RequestContext

    init(suspensions: SuspensionRegistry, context: RequestContext) {
        self.suspensions = suspensions
        self.context = context
    }

    /// Sends `response` (a bytes body; a streamed body is answered 500). Returns false
    /// when the request had already been answered (it timed out, or the server stopped).
    @discardableResult
    public func respond(_ response: HTTPResponse) -> Bool {
        let answer: HTTPResponse
        if case .stream = response.body {
            answer = .problem(status: 500, title: "Internal Server Error", detail: "A deferred answer cannot stream.")
        } else {
            answer = response
        }
        return suspensions.resume(context) { [context] in context.hand(answer) }
    }

    /// Answers `response` if nothing else has answered within `seconds` (no later than
    /// the request timeout). The server's watchdog checks deadlines every 100 ms: no
    /// timer is made per request.
    public func expire(after seconds: Double, with response: @escaping @Sendable () -> HTTPResponse) {
        let deadline = ContinuousClock.now + .milliseconds(Int64(max(0, seconds) * 1000))
        suspensions.tighten(context, deadline: deadline) { [context] in context.hand(response()) }
    }
}
