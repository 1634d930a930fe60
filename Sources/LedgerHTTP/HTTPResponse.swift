import LedgerCore
/// What a response body is: bytes in memory, or a producer streamed chunk by chunk.
public enum ResponseBody: Sendable {
    /// The whole body, sent with a Content-Length.
    case bytes([UInt8])
    /// A body produced on a worker thread: called repeatedly until it returns nil, sent chunked.
    /// Throwing aborts the connection, so the client sees a truncated (unterminated) body.
    case stream(@Sendable () throws -> [UInt8]?)
}

/// One HTTP response; the server adds `X-Request-Id` and framing headers itself.
public struct HTTPResponse: Sendable {
    public var status: Int
    /// Header fields in order; Content-Length and Transfer-Encoding are the server's business and are dropped.
    public var headers: [(String, String)]
    public var body: ResponseBody

    public init(status: Int, headers: [(String, String)] = [], body: ResponseBody = .bytes([])) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    /// The first value of a header field, looked up case-insensitively.
    public func header(_ name: String) -> String? {
        let wanted = HTTPRequest.fieldName(name)
        return headers.first { HTTPRequest.fieldName($0.0) == wanted }?.1
    }

    /// The body bytes, or nil for a streamed body.
    public var bodyBytes: [UInt8]? {
        if case .bytes(let bytes) = body { return bytes }
        return nil
    }

    /// A JSON document already serialised by the caller.
    public static func json(_ status: Int, _ bytes: [UInt8], headers: [(String, String)] = []) -> HTTPResponse {
        HTTPResponse(status: status, headers: [("Content-Type", "application/json")] + headers, body: .bytes(bytes))
    }

    /// An RFC 9457 problem document (`type`, `title`, `status`, `detail`) as application/problem+json.
    public static func problem(
        status: Int,
        title: String,
        detail: String? = nil,
        type: String = "about:blank",
        headers: [(String, String)] = []
    ) -> HTTPResponse {
        var text = "{\"type\":" + JSONSerializer.quoted(type)
        text += ",\"title\":" + JSONSerializer.quoted(title)
        text += ",\"status\":" + String(status)
        if let detail { text += ",\"detail\":" + JSONSerializer.quoted(detail) }
        text += "}"
        return HTTPResponse(
            status: status,
            headers: [("Content-Type", "application/problem+json")] + headers,
            body: .bytes(Array(text.utf8)))
    }

    /// Plain text, UTF-8.
    public static func text(_ status: Int, _ text: String, contentType: String = "text/plain; charset=utf-8") -> HTTPResponse {
        HTTPResponse(status: status, headers: [("Content-Type", contentType)], body: .bytes(Array(text.utf8)))
    }
}
