import Synchronization

/// Per-request state, owned by libmicrohttpd's `con_cls` slot from the first access-handler
/// call until the completion notification (retained through `Unmanaged`).
///
/// @unchecked Sendable: the plain fields are touched only by the polling thread that owns the
/// connection (libmicrohttpd serialises calls for one connection); the worker thread only
/// reads the immutable request it was given and writes `pending`, which is behind a Mutex.
final class RequestContext: @unchecked Sendable {
    enum Phase {
        case receiving
        case dispatched
        case responded
    }

    let started = ContinuousClock.now
    var phase = Phase.receiving
    /// False until the access handler's first call: libmicrohttpd made this context at the
    /// request line (URI log callback), and answers some heads itself without calling us.
    var begun = false
    /// The answer was written straight to the socket (`DirectAnswer`), then the connection closed.
    var answeredDirectly = false
    var method = ""
    var path = ""
    var version = ""
    var headers: [(String, String)] = []
    var queryItems: [(name: String, value: String)] = []
    var remoteAddress = "unknown"
    var requestID = ""
    var body: [UInt8] = []
    /// The status actually queued (0 until a response is queued).
    var status = 0
    var stream: ResponseStream?
    /// The request as dispatched, without its body, kept for the completion observer.
    var dispatched: HTTPRequest?

    /// The answer handed over by a worker (or the watchdog, or stop()) before resuming.
    private let pending = Mutex<(HTTPResponse, ResponseStream?)?>(nil)

    func hand(_ response: HTTPResponse, stream: ResponseStream? = nil) {
        pending.withLock { $0 = (response, stream) }
    }

    func takePending() -> (HTTPResponse, ResponseStream?)? {
        pending.withLock { value in
            defer { value = nil }
            return value
        }
    }

    /// The request as the service sees it (its body is empty for layer-level rejections).
    func request(body: [UInt8] = []) -> HTTPRequest {
        var headerMap: [String: String] = [:]
        headerMap.reserveCapacity(headers.count)
        for (name, value) in headers {
            let key = HTTPRequest.fieldName(name)
            if let existing = headerMap[key] { headerMap[key] = existing + ", " + value } else { headerMap[key] = value }
        }
        return HTTPRequest(
            method: method, path: path, queryItems: queryItems, lowercasedHeaders: headerMap, body: body,
            remoteAddress: remoteAddress, requestID: requestID)
    }
}

/// What the server observed about one finished request, for logs and metrics.
public struct HTTPExchange: Sendable {
    /// The request (its body is always empty here: bodies are never logged).
    public let request: HTTPRequest
    /// The status sent, or 0 when the connection ended before any response was queued.
    public let status: Int
    /// Seconds from the end of the request headers to the end of the response.
    public let duration: Double
    /// False when the client went away, the connection failed, or the server shut down first.
    public let completed: Bool
}
