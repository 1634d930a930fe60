import Glibc

/// A blocking HTTP/1.1 keep-alive client over one TCP socket to a loopback
/// server: just enough for the load generator (Content-Length and chunked
/// responses, reconnect after `Connection: close`). Used by one thread only.
final class HTTPConnection {
    struct Response {
        var status: Int
        var body: [UInt8]
    }

    enum Failure: Error, CustomStringConvertible {
        case system(String, Int32)
        case closed
        case malformed(String)

        var description: String {
            switch self {
            case .system(let call, let code): return "\(call): \(String(cString: strerror(code)))"
            case .closed: return "connection closed by the server"
            case .malformed(let what): return "malformed response: \(what)"
            }
        }
    }

    let host: String
    let port: UInt16
    private let timeoutSeconds: Int
    private var fd: Int32 = -1
    private var buffer: [UInt8] = []
    private var start = 0   // unread bytes are buffer[start...]
    private var chunk = [UInt8](repeating: 0, count: 16 * 1024)   // recv's landing area, reused

    init(host: String, port: UInt16, timeoutSeconds: Int = 20) throws {
        self.host = host
        self.port = port
        self.timeoutSeconds = timeoutSeconds
        buffer.reserveCapacity(16 * 1024)
        try connect()
    }

    deinit { if fd >= 0 { close(fd) } }

    /// Sends one request and reads its response; reconnects once if the
    /// server had closed the idle connection before the request was sent.
    func send(_ request: [UInt8]) throws -> Response {
        if fd < 0 { try connect() }
        do {
            try writeAll(request)
            return try readResponse()
        } catch Failure.closed where buffer.count == start {
            try connect()
            try writeAll(request)
            return try readResponse()
        }
    }

    private func connect() throws {
        if fd >= 0 { close(fd) }
        buffer.removeAll(keepingCapacity: true)
        start = 0
        fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw Failure.system("socket", errno) }
        var one: Int32 = 1
        setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
        var timeout = timeval(tv_sec: timeoutSeconds, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        guard inet_pton(AF_INET, host, &address.sin_addr) == 1 else {
            throw Failure.malformed("\(host) is not an IPv4 address")
        }
        let rc = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        if rc != 0 {
            let code = errno
            close(fd)
            fd = -1
            throw Failure.system("connect", code)
        }
    }

    private func writeAll(_ bytes: [UInt8]) throws {
        var offset = 0
        try bytes.withUnsafeBytes { raw in
            while offset < raw.count {
                let n = Glibc.send(fd, raw.baseAddress! + offset, raw.count - offset, Int32(MSG_NOSIGNAL))
                if n < 0 {
                    if errno == EINTR { continue }
                    if errno == EPIPE || errno == ECONNRESET { throw Failure.closed }
                    throw Failure.system("send", errno)
                }
                offset += n
            }
        }
    }

    /// Reads more bytes into the buffer; throws `.closed` at end of stream.
    private func fill() throws {
        if start > 0 && start == buffer.count {
            buffer.removeAll(keepingCapacity: true)
            start = 0
        }
        while true {
            let n = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if n > 0 {
                buffer.append(contentsOf: chunk[0..<n])
                return
            }
            if n == 0 { throw Failure.closed }
            if errno == EINTR { continue }
            if errno == ECONNRESET { throw Failure.closed }
            if errno == EAGAIN || errno == EWOULDBLOCK { throw Failure.system("recv (timed out)", errno) }
            throw Failure.system("recv", errno)
        }
    }

    /// The index just past "\r\n" of the next line, reading as needed.
    private func lineEnd() throws -> Int {
        var scanned = 0   // bytes after `start` already searched (fill() may move `start`)
        while true {
            var i = start + scanned
            while i + 1 < buffer.count {
                if buffer[i] == 13 && buffer[i + 1] == 10 { return i + 2 }
                i += 1
            }
            scanned = max(0, buffer.count - 1 - start)
            try fill()
        }
    }

    private func readLine() throws -> String {
        let end = try lineEnd()
        let line = String(decoding: buffer[start..<(end - 2)], as: UTF8.self)
        start = end
        return line
    }

    private func readBytes(_ count: Int) throws -> [UInt8] {
        while buffer.count - start < count { try fill() }
        let bytes = Array(buffer[start..<(start + count)])
        start += count
        return bytes
    }

    private func readResponse() throws -> Response {
        let statusLine = try readLine()
        let parts = statusLine.split(separator: " ", maxSplits: 2)
        guard parts.count >= 2, parts[0].hasPrefix("HTTP/1."), let status = Int(parts[1]) else {
            throw Failure.malformed("status line \"\(statusLine.prefix(80))\"")
        }
        var contentLength: Int?
        var chunked = false
        var closeAfter = parts[0] == "HTTP/1.0"
        while true {
            let line = try readLine()
            if line.isEmpty { break }
            guard let colon = line.firstIndex(of: ":") else { continue }
            let name = line[..<colon].lowercased()
            let value = line[line.index(after: colon)...].trimmingCharacters(in: " \t")
            switch name {
            case "content-length": contentLength = Int(value)
            case "transfer-encoding": chunked = value.lowercased().contains("chunked")
            case "connection": closeAfter = value.lowercased().contains("close")
            default: break
            }
        }
        var body: [UInt8] = []
        if chunked {
            while true {
                let sizeLine = try readLine()
                guard let size = Int(sizeLine.split(separator: ";")[0].trimmingCharacters(in: " "), radix: 16) else {
                    throw Failure.malformed("chunk size \"\(sizeLine.prefix(20))\"")
                }
                if size == 0 {
                    while try !readLine().isEmpty {}   // trailers
                    break
                }
                body += try readBytes(size)
                _ = try readLine()
            }
        } else if let contentLength {
            body = try readBytes(contentLength)
        } else if status != 204 && status != 304 {
            // No framing: the body runs to the end of the connection.
            while true {
                do { try fill() } catch Failure.closed { break }
            }
            body = Array(buffer[start...])
            start = buffer.count
            closeAfter = true
        }
        if closeAfter {
            close(fd)
            fd = -1
        }
        return Response(status: status, body: body)
    }
}

private extension Substring {
    func trimmingCharacters(in set: String) -> String {
        var s = self
        while let f = s.first, set.contains(f) { s = s.dropFirst() }
        while let l = s.last, set.contains(l) { s = s.dropLast() }
        return String(s)
    }
}
