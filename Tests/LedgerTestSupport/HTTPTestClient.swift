import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// One HTTP response as the test saw it on the wire.
public struct Reply: CustomStringConvertible, Sendable {
    public var status: Int
    public var headers: [(String, String)]
    public var body: [UInt8]

    public init(status: Int, headers: [(String, String)], body: [UInt8]) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    public func header(_ name: String) -> String? {
        headers.first { $0.0.lowercased() == name.lowercased() }?.1
    }

    public var text: String { String(decoding: body, as: UTF8.self) }

    public var description: String { "HTTP \(status) \(header("Content-Type") ?? "-") \(text.prefix(600))" }
}

public enum ClientError: Error, CustomStringConvertible {
    case io(String)
    case closed
    case malformed(String)

    public var description: String {
        switch self {
        case .io(let what): return "socket error: \(what)"
        case .closed: return "the server closed the connection (or timed out) before a whole response arrived"
        case .malformed(let line): return "malformed response line: \(line)"
        }
    }
}

/// A deliberately small HTTP/1.1 client over a raw loopback socket, so tests can
/// send framing byte for byte (pipelined, partial, slow) and see exactly what the
/// server answered, on one connection kept alive for as long as the test wants.
public final class TestConnection: @unchecked Sendable {
    // @unchecked: one thread may send while another reads; `send` touches only
    // the socket, and `buffer` belongs to the reading thread.
    private let fd: Int32
    private var buffer: [UInt8] = []

    /// `timeout`: how long one receive or one send may block before it fails, so a
    /// server that stops answering fails the test instead of hanging it.
    /// `receiveBufferBytes`: a small receive window, set before connecting (a slow reader).
    public init(port: Int, timeout: Double = 20, receiveBufferBytes: Int32? = nil) throws {
        fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw ClientError.io("socket: errno \(errno)") }
        if var size = receiveBufferBytes {
            _ = setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
        }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = UInt16(port).bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard result == 0 else {
            // No close(fd) here: deinit runs when a fully initialized class's init throws,
            // and a second close could shut a descriptor another thread has just been given
            // (an in-process server's new connection: libmicrohttpd then aborts).
            throw ClientError.io("connect to 127.0.0.1:\(port): errno \(errno)")
        }
        var limit = timeval(tv_sec: Int(timeout), tv_usec: Int(timeout.truncatingRemainder(dividingBy: 1) * 1e6))
        _ = setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &limit, socklen_t(MemoryLayout<timeval>.size))
        _ = setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &limit, socklen_t(MemoryLayout<timeval>.size))
    }

    deinit { close(fd) }

    public func send(_ text: String) throws { try send(Array(text.utf8)) }

    /// Writes every byte (the kernel may take them in parts); throws once the server
    /// has closed or reset the connection, or a write blocks past the timeout.
    public func send(_ bytes: [UInt8]) throws {
        var offset = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress! + offset, bytes.count - offset, Int32(MSG_NOSIGNAL)) }
            if written < 0 && errno == EINTR { continue }
            guard written > 0 else { throw ClientError.io("send: errno \(errno)") }
            offset += written
        }
    }

    /// Reads at most `limit` more bytes into the buffer; false on EOF, error or timeout.
    private func fill(upTo limit: Int = 65_536) -> Bool {
        var chunk = [UInt8](repeating: 0, count: limit)
        while true {
            let count = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { return false }
            buffer.append(contentsOf: chunk[0..<count])
            return true
        }
    }

    private func line() throws -> String {
        while true {
            if let index = buffer.firstIndex(of: 10) {
                var bytes = Array(buffer[..<index])
                buffer.removeFirst(index + 1)
                if bytes.last == 13 { bytes.removeLast() }
                return String(decoding: bytes, as: UTF8.self)
            }
            guard fill() else { throw ClientError.closed }
        }
    }

    /// Exactly `count` bytes of what the server sent, read no further than that
    /// (a slow reader keeps the rest in the server's socket).
    public func receive(exactly count: Int) throws -> [UInt8] {
        while buffer.count < count { guard fill(upTo: count - buffer.count) else { throw ClientError.closed } }
        let out = Array(buffer[..<count])
        buffer.removeFirst(count)
        return out
    }

    /// Whatever one read returns, at most `limit` bytes; empty on EOF or timeout.
    public func receiveSome(upTo limit: Int) -> [UInt8] {
        if buffer.isEmpty { _ = fill(upTo: limit) }
        let out = Array(buffer.prefix(limit))
        buffer.removeFirst(out.count)
        return out
    }

    /// Reads one response: Content-Length, chunked, or until the server closes.
    /// `toHEAD`: the answer to a HEAD request, which has headers only.
    public func readResponse(toHEAD: Bool = false) throws -> Reply {
        let statusLine = try line()
        let parts = statusLine.split(separator: " ")
        guard parts.count >= 2, parts[0].hasPrefix("HTTP/1."), let status = Int(parts[1]) else {
            throw ClientError.malformed(statusLine)
        }
        var headers: [(String, String)] = []
        while true {
            let header = try line()
            if header.isEmpty { break }
            guard let colon = header.firstIndex(of: ":") else { throw ClientError.malformed(header) }
            headers.append((String(header[..<colon]), header[header.index(after: colon)...].trimmingCharacters(in: .whitespaces)))
        }
        var reply = Reply(status: status, headers: headers, body: [])
        if toHEAD || status == 204 || status == 304 || status < 200 { return reply }
        if let length = reply.header("Content-Length").flatMap(Int.init) {
            reply.body = try receive(exactly: length)
        } else if reply.header("Transfer-Encoding")?.lowercased() == "chunked" {
            while true {
                let sizeLine = try line()
                guard let size = Int(sizeLine.split(separator: ";").first ?? "", radix: 16) else { throw ClientError.malformed(sizeLine) }
                if size == 0 {
                    while try !line().isEmpty {}
                    break
                }
                reply.body += try receive(exactly: size)
                _ = try line()
            }
        } else {
            while fill() {}
            reply.body = buffer
            buffer = []
        }
        return reply
    }

    /// Reads until the server closes the connection (a reset counts) or `seconds`
    /// pass, whatever the timeout: every byte not yet read, and whether it closed.
    public func readUntilClosed(within seconds: Double) -> (bytes: [UInt8], closed: Bool) {
        var bytes = buffer
        buffer = []
        let deadline = ContinuousClock.now + .seconds(seconds)
        var chunk = [UInt8](repeating: 0, count: 65_536)
        while true {
            let left = deadline - .now
            guard left > .zero else { return (bytes, false) }
            var waiting = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            let ready = poll(&waiting, 1, Int32(max(1, (left / .milliseconds(1)).rounded(.up))))
            if ready < 0 && errno != EINTR { return (bytes, true) }
            guard ready > 0 else { continue }
            let count = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
            if count > 0 {
                bytes.append(contentsOf: chunk[0..<count])
            } else if count == 0 || !(errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) {
                return (bytes, true)
            }
        }
    }

    /// True when the server closes the connection within `seconds` (what it sends meanwhile is discarded).
    public func closesWithin(_ seconds: Double) -> Bool { readUntilClosed(within: seconds).closed }
}

/// Sends one request per connection (`Connection: close`) and reads the reply.
public struct HTTPClient: Sendable {
    public let port: Int
    public var timeout: Double

    public init(port: Int, timeout: Double = 20) {
        self.port = port
        self.timeout = timeout
    }

    /// `request`, byte for byte, on a fresh connection: the one answer it gets.
    public func exchange(_ request: String) throws -> Reply {
        let connection = try TestConnection(port: port, timeout: timeout)
        try connection.send(request)
        return try connection.readResponse()
    }

    public func send(_ method: String, _ target: String, headers: [(String, String)] = [], body: [UInt8] = []) throws -> Reply {
        var head = "\(method) \(target) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nConnection: close\r\n"
        for (name, value) in headers { head += "\(name): \(value)\r\n" }
        if !body.isEmpty || method == "POST" || method == "PUT" { head += "Content-Length: \(body.count)\r\n" }
        head += "\r\n"
        let connection = try TestConnection(port: port, timeout: timeout)
        try connection.send(Array(head.utf8) + body)
        return try connection.readResponse(toHEAD: method == "HEAD")
    }

    public func get(_ target: String, token: String? = nil, headers: [(String, String)] = []) throws -> Reply {
        try send("GET", target, headers: bearer(token) + headers)
    }

    public func post(_ target: String, token: String? = nil, json: String, headers: [(String, String)] = []) throws -> Reply {
        try send("POST", target, headers: bearer(token) + [("Content-Type", "application/json")] + headers, body: Array(json.utf8))
    }

    public func post(_ target: String, token: String? = nil, body: [UInt8], headers: [(String, String)] = []) throws -> Reply {
        try send("POST", target, headers: bearer(token) + [("Content-Type", "application/json")] + headers, body: body)
    }

    private func bearer(_ token: String?) -> [(String, String)] {
        token.map { [("Authorization", "Bearer " + $0)] } ?? []
    }
}
