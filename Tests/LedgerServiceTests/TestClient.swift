import Foundation
import LedgerCore
#if canImport(Glibc)
import Glibc
#endif

/// One HTTP response as the test saw it on the wire.
struct Reply: CustomStringConvertible {
    var status: Int
    var headers: [(String, String)]
    var body: [UInt8]

    func header(_ name: String) -> String? {
        headers.first { $0.0.lowercased() == name.lowercased() }?.1
    }

    var text: String { String(decoding: body, as: UTF8.self) }

    /// The body parsed as JSON, or nil when it is not JSON.
    var json: JSONValue? { try? JSONValue.parse(body) }

    subscript(key: String) -> JSONValue? { json?[key] }

    var description: String { "HTTP \(status) \(header("Content-Type") ?? "-") \(text.prefix(600))" }

    /// True when this is an RFC 9457 problem whose `status` matches the HTTP status.
    var isProblem: Bool {
        guard header("Content-Type")?.lowercased().hasPrefix("application/problem+json") == true, let j = json else { return false }
        return j["type"]?.stringValue != nil && j["title"]?.stringValue?.isEmpty == false
            && j["status"]?.int64Value == Int64(status) && j["detail"]?.stringValue?.isEmpty == false
    }
}

enum ClientError: Error, CustomStringConvertible {
    case io(String)
    case closed
    case malformed(String)

    var description: String {
        switch self {
        case .io(let what): return "socket error: \(what)"
        case .closed: return "the server closed the connection (or timed out) before a whole response arrived"
        case .malformed(let line): return "malformed response line: \(line)"
        }
    }
}

/// A deliberately small HTTP/1.1 client over a raw loopback socket, so tests
/// can send framing byte for byte and see exactly what the server answered.
final class TestConnection: @unchecked Sendable {
    // @unchecked: one thread may send while another reads; `send` touches only
    // the socket, and `buffer` belongs to the reading thread.
    let fd: Int32
    private var buffer: [UInt8] = []

    /// `receiveBufferBytes`: a small receive window, set before connecting (a slow reader).
    init(port: Int, receiveTimeout: Double = 20, receiveBufferBytes: Int32? = nil) throws {
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
        var timeout = timeval(tv_sec: Int(receiveTimeout), tv_usec: Int(receiveTimeout.truncatingRemainder(dividingBy: 1) * 1e6))
        _ = setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        _ = setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    }

    deinit { close(fd) }

    func send(_ text: String) throws { try send(Array(text.utf8)) }

    func send(_ bytes: [UInt8]) throws {
        var offset = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress! + offset, bytes.count - offset, Int32(MSG_NOSIGNAL)) }
            if written < 0 && errno == EINTR { continue }
            guard written > 0 else { throw ClientError.io("send: errno \(errno)") }
            offset += written
        }
    }

    /// Reads more bytes; false on EOF, error or timeout.
    private func fill() -> Bool {
        var chunk = [UInt8](repeating: 0, count: 65_536)
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

    private func bytes(_ count: Int) throws -> [UInt8] {
        while buffer.count < count { guard fill() else { throw ClientError.closed } }
        let out = Array(buffer[..<count])
        buffer.removeFirst(count)
        return out
    }

    /// Reads one response: Content-Length, chunked, or until the server closes.
    func readResponse() throws -> Reply {
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
        if status == 204 || status == 304 || status < 200 { return reply }
        if let length = reply.header("Content-Length").flatMap(Int.init) {
            reply.body = try bytes(length)
        } else if reply.header("Transfer-Encoding")?.lowercased() == "chunked" {
            while true {
                let sizeLine = try line()
                guard let size = Int(sizeLine.split(separator: ";").first ?? "", radix: 16) else { throw ClientError.malformed(sizeLine) }
                if size == 0 {
                    while try !line().isEmpty {}
                    break
                }
                reply.body += try bytes(size)
                _ = try line()
            }
        } else {
            while fill() {}
            reply.body = buffer
            buffer = []
        }
        return reply
    }

    /// Reads until the server closes or `seconds` pass: the bytes that arrived
    /// after the last response, and whether the connection was closed.
    func drainUntilClosed(within seconds: Double) -> (extra: [UInt8], closed: Bool) {
        var extra = buffer
        buffer = []
        var timeout = timeval(tv_sec: 0, tv_usec: 200_000)
        _ = setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        let deadline = Date(timeIntervalSinceNow: seconds)
        var chunk = [UInt8](repeating: 0, count: 65_536)
        while Date() < deadline {
            let count = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if count == 0 { return (extra, true) }
            if count > 0 { extra.append(contentsOf: chunk[0..<count]); continue }
            if errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR { continue }
            return (extra, true)  // a reset is a close too
        }
        return (extra, false)
    }
}

/// Sends one request per connection (`Connection: close`) and reads the reply.
struct HTTPClient: Sendable {
    let port: Int
    var receiveTimeout: Double = 20

    func send(_ method: String, _ target: String, headers: [(String, String)] = [], body: [UInt8] = []) throws -> Reply {
        var head = "\(method) \(target) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nConnection: close\r\n"
        for (name, value) in headers { head += "\(name): \(value)\r\n" }
        if !body.isEmpty || method == "POST" || method == "PUT" { head += "Content-Length: \(body.count)\r\n" }
        head += "\r\n"
        let connection = try TestConnection(port: port, receiveTimeout: receiveTimeout)
        try connection.send(Array(head.utf8) + body)
        return try connection.readResponse()
    }

    func get(_ target: String, token: String? = nil, headers: [(String, String)] = []) throws -> Reply {
        try send("GET", target, headers: bearer(token) + headers)
    }

    func post(_ target: String, token: String? = nil, json: String, headers: [(String, String)] = []) throws -> Reply {
        try send("POST", target, headers: bearer(token) + [("Content-Type", "application/json")] + headers, body: Array(json.utf8))
    }

    func post(_ target: String, token: String? = nil, body: [UInt8], headers: [(String, String)] = []) throws -> Reply {
        try send("POST", target, headers: bearer(token) + [("Content-Type", "application/json")] + headers, body: body)
    }

    private func bearer(_ token: String?) -> [(String, String)] {
        token.map { [("Authorization", "Bearer " + $0)] } ?? []
    }
}
