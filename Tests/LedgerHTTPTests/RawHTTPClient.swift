import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A deliberately dumb HTTP/1.1 client over a raw socket, so tests can send framing byte for byte.
struct RawResponse {
    var status: Int
    var headers: [(String, String)]
    var body: [UInt8]

    func header(_ name: String) -> String? {
        headers.first { $0.0.lowercased() == name.lowercased() }?.1
    }

    var text: String { String(decoding: body, as: UTF8.self) }
}

final class RawConnection: @unchecked Sendable {
    // @unchecked: one thread may send while another reads; `send` touches only the socket,
    // and `buffer` belongs to the reading thread.
    let fd: Int32
    private var buffer: [UInt8] = []

    init(port: Int, receiveTimeout: Double = 5) throws {
        fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw RawError.io("socket") }
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
            // No close(fd) here: deinit closes it (it runs when a fully initialized class's
            // init throws), and closing twice could shut another thread's new descriptor.
            throw RawError.io("connect: \(errno)")
        }
        var timeout = timeval(tv_sec: Int(receiveTimeout), tv_usec: Int(receiveTimeout.truncatingRemainder(dividingBy: 1) * 1e6))
        _ = setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    }

    deinit { close(fd) }

    func send(_ text: String) throws { try send(Array(text.utf8)) }

    func send(_ bytes: [UInt8]) throws {
        var offset = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress! + offset, bytes.count - offset, Int32(MSG_NOSIGNAL)) }
            guard written > 0 else { throw RawError.io("send: \(errno)") }
            offset += written
        }
    }

    /// Reads more bytes; false on EOF, error, or timeout.
    private func fill() -> Bool {
        var chunk = [UInt8](repeating: 0, count: 65_536)
        let count = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
        guard count > 0 else { return false }
        buffer.append(contentsOf: chunk[0..<count])
        return true
    }

    private func line() throws -> String {
        while true {
            if let index = buffer.firstIndex(of: 10) {
                var bytes = Array(buffer[..<index])
                buffer.removeFirst(index + 1)
                if bytes.last == 13 { bytes.removeLast() }
                return String(decoding: bytes, as: UTF8.self)
            }
            guard fill() else { throw RawError.closed }
        }
    }

    private func bytes(_ count: Int) throws -> [UInt8] {
        while buffer.count < count { guard fill() else { throw RawError.closed } }
        let out = Array(buffer[..<count])
        buffer.removeFirst(count)
        return out
    }

    /// Reads one response (Content-Length, chunked, or until close).
    func readResponse(head: Bool = false) throws -> RawResponse {
        let statusLine = try line()
        let parts = statusLine.split(separator: " ")
        guard parts.count >= 2, let status = Int(parts[1]) else { throw RawError.malformed(statusLine) }
        var headers: [(String, String)] = []
        while true {
            let header = try line()
            if header.isEmpty { break }
            guard let colon = header.firstIndex(of: ":") else { throw RawError.malformed(header) }
            headers.append((String(header[..<colon]), header[header.index(after: colon)...].trimmingCharacters(in: .whitespaces)))
        }
        var response = RawResponse(status: status, headers: headers, body: [])
        if head || status == 204 || status == 304 || status < 200 { return response }
        if let length = response.header("Content-Length").flatMap(Int.init) {
            response.body = try bytes(length)
        } else if response.header("Transfer-Encoding")?.lowercased() == "chunked" {
            while true {
                let sizeLine = try line()
                guard let size = Int(sizeLine.split(separator: ";")[0], radix: 16) else { throw RawError.malformed(sizeLine) }
                if size == 0 {
                    while try !line().isEmpty {}
                    break
                }
                response.body += try bytes(size)
                _ = try line()
            }
        } else {
            while fill() {}
            response.body = buffer
            buffer = []
        }
        return response
    }

    /// Everything the peer sends until it closes the connection or `seconds` pass.
    func readAll(within seconds: Double) -> [UInt8] {
        let deadline = Date(timeIntervalSinceNow: seconds)
        var chunk = [UInt8](repeating: 0, count: 65_536)
        while Date() < deadline {
            let count = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if count > 0 {
                buffer.append(contentsOf: chunk[0..<count])
                continue
            }
            if count < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) { continue }
            break
        }
        defer { buffer = [] }
        return buffer
    }

    /// True when the peer closes the connection within `seconds` (reading and discarding).
    func closesWithin(_ seconds: Double) -> Bool {
        let deadline = Date(timeIntervalSinceNow: seconds)
        var chunk = [UInt8](repeating: 0, count: 65_536)
        while Date() < deadline {
            let count = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if count == 0 { return true }
            if count < 0 {
                if errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR { continue }
                return true  // reset counts as closed
            }
        }
        return false
    }
}

enum RawError: Error {
    case io(String)
    case closed
    case malformed(String)
}

/// One request on a fresh connection.
func exchange(_ port: Int, _ request: String) throws -> RawResponse {
    let connection = try RawConnection(port: port)
    try connection.send(request)
    return try connection.readResponse()
}

func get(_ port: Int, _ target: String, headers: String = "") throws -> RawResponse {
    try exchange(port, "GET \(target) HTTP/1.1\r\nHost: test\r\n\(headers)Connection: close\r\n\r\n")
}
