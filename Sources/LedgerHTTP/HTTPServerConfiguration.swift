/// Everything the HTTP server can be tuned with; a plain value with production defaults.
public struct HTTPServerConfiguration: Sendable, Equatable {
    /// The address to listen on: an IPv4 or IPv6 literal, or a host name resolved at start.
    public var host: String = "127.0.0.1"
    /// The TCP port; 0 picks a free port, which `HTTPServer.start()` returns.
    public var port: Int = 8080
    /// libmicrohttpd's epoll polling threads (accept, parse, send). They run only the handlers
    /// of requests picked to run inline; a polling thread blocked in one stalls its other connections.
    public var pollingThreads: Int = 2
    /// Dedicated threads that run the blocking handler; at most this many requests execute at once.
    public var workerThreads: Int = 32
    /// Connections open at once, over all clients.
    public var connectionLimit: Int = 1024
    /// Connections open at once from one IP address (0 = no per-IP limit).
    public var perIPConnectionLimit: Int = 512
    /// Seconds a connection may stay silent before it is closed.
    public var idleTimeoutSeconds: Int = 30
    /// Seconds a handler may take before the client gets 503 with Retry-After (its late answer is dropped).
    public var requestTimeoutSeconds: Double = 15
    /// Largest accepted request body in bytes; larger ones get 413.
    public var maxBodyBytes: Int = 1 << 20
    /// Memory per connection for the request line, headers and I/O buffers (libmicrohttpd's pool).
    /// 16 KiB: libmicrohttpd zeroes the whole of it after every request, which at 32 KiB cost
    /// about 3 µs of CPU a request. A head it cannot hold gets libmicrohttpd's own HTML 431.
    public var connectionMemoryLimit: Int = 16 * 1024
    /// Largest request line plus headers, in bytes as received; larger heads get 431 problem+json.
    /// Half the memory above, so that any head within it leaves room for the answer.
    public var maxHeadBytes: Int = 8 * 1024
    /// Most header fields a request may carry; more get 431 problem+json. Each field also costs
    /// libmicrohttpd a record of about 50 bytes in the connection's memory.
    public var maxHeaderFields: Int = 100
    /// Seconds a client has to send a whole request head: from the accept for a connection's
    /// first request, else from its request line (a keep-alive connection may first stay idle
    /// for `idleTimeoutSeconds`). Past it the connection is closed without an answer, as nginx
    /// does at `client_header_timeout`.
    public var headTimeoutSeconds: Double = 10
    /// Seconds a client has to send a whole body once its head is in: a body still arriving past
    /// it gets 408 with its next bytes, one that stopped is cut a second later.
    public var bodyTimeoutSeconds: Double = 30
    /// After an answer that closes the connection, how long what the client still sends is read
    /// and dropped (so it reads the answer, not a reset), and how many bytes at most.
    public var lingerSeconds: Double = 5
    public var lingerBytes: Int = 8 << 20
    /// The kernel's accept backlog.
    public var listenBacklog: Int = 511
    /// Seconds `stop()` waits for requests in flight before answering the rest 503.
    public var shutdownGraceSeconds: Double = 20

    public init() {}

    /// A configuration listening on "host:port" ("127.0.0.1:8080", "[::1]:0", ":8080").
    public init(listen: String) throws(HTTPServerError) {
        let (host, port) = try Self.parseListenAddress(listen)
        self.host = host
        self.port = port
    }

    /// Splits "host:port"; the host may be bracketed IPv6 or empty (meaning all IPv4 interfaces).
    public static func parseListenAddress(_ text: String) throws(HTTPServerError) -> (host: String, port: Int) {
        let text = text.trimmingSpaces()
        let host: Substring
        let portText: Substring
        if text.hasPrefix("[") {
            guard let close = text.firstIndex(of: "]"), text[text.index(after: close)...].hasPrefix(":") else {
                throw .invalidConfiguration("listen address \"\(text)\" is not [ipv6]:port")
            }
            host = text[text.index(after: text.startIndex)..<close]
            portText = text[text.index(close, offsetBy: 2)...]
        } else {
            guard let colon = text.lastIndex(of: ":"), !text[..<colon].contains(":") else {
                throw .invalidConfiguration("listen address \"\(text)\" is not host:port")
            }
            host = text[..<colon]
            portText = text[text.index(after: colon)...]
        }
        guard let port = Int(portText), (0...65_535).contains(port) else {
            throw .invalidConfiguration("listen address \"\(text)\" has no valid port (0-65535)")
        }
        return (host.isEmpty ? "0.0.0.0" : String(host), port)
    }
}

/// Why the server could not be configured or started.
public enum HTTPServerError: Error, Sendable, Equatable, CustomStringConvertible {
    case invalidConfiguration(String)
    case cannotListen(String)
    case cannotStart(String)
    case alreadyStarted

    public var description: String {
        switch self {
        case .invalidConfiguration(let why): "invalid HTTP configuration: \(why)"
        case .cannotListen(let why): "cannot listen: \(why)"
        case .cannotStart(let why): "cannot start the HTTP server: \(why)"
        case .alreadyStarted: "the HTTP server was already started"
        }
    }
}

extension String {
    func trimmingSpaces() -> String {
        var scalars = Substring(self)
        while let first = scalars.first, first == " " || first == "\t" { scalars = scalars.dropFirst() }
        while let last = scalars.last, last == " " || last == "\t" { scalars = scalars.dropLast() }
        return String(scalars)
    }
}
