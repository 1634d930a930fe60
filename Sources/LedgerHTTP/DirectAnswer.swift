import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A final answer written straight to a connection's socket, for the moments libmicrohttpd
/// 0.9.75 cannot queue one: in the middle of a request body (an oversized chunked body), when
/// the connection's memory is too full to build a response header (a head near the memory
/// limit), and for heads refused before routing.
///
/// Only the polling thread that owns the connection writes it, at a point where
/// libmicrohttpd has written nothing of a response yet, and the connection is closed right
/// after (with `Connection: close`), so nothing of libmicrohttpd's follows on the wire.
enum DirectAnswer {
    /// The bytes of `response` (a body in memory) as an HTTP/1.1 message that closes the connection.
    static func encode(_ response: HTTPResponse, requestID: String) -> [UInt8] {
        let body = response.bodyBytes ?? []
        var head = "HTTP/1.1 \(response.status) \(reason(response.status))\r\n"
        head += "Date: \(httpDate(Date()))\r\n"
        for (name, value) in response.headers where ServerCore.isSafeHeader(name, value)
            && HTTPRequest.fieldName(name) != "connection" {
            head += "\(name): \(value)\r\n"
        }
        head += "X-Request-Id: \(requestID)\r\n"
        head += "Connection: close\r\n"
        head += "Content-Length: \(body.count)\r\n\r\n"
        return Array(head.utf8) + body
    }

    /// Writes the whole answer, waiting up to `seconds` for room in the socket's buffer (an
    /// answer is a few hundred bytes, so there is room unless the client stopped reading; the
    /// wait is short because it holds the polling thread's other connections).
    @discardableResult
    static func send(_ bytes: [UInt8], to fd: Int32, seconds: Double = 0.2) -> Bool {
        var offset = 0
        let deadline = Date(timeIntervalSinceNow: seconds)
        while offset < bytes.count {
            let written = bytes.withUnsafeBytes {
                Glibc.send(fd, $0.baseAddress! + offset, bytes.count - offset, Int32(MSG_NOSIGNAL | MSG_DONTWAIT))
            }
            if written > 0 {
                offset += written
                continue
            }
            guard written < 0, errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR, Date() < deadline else { return false }
            var poller = pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
            _ = poll(&poller, 1, 50)
        }
        return true
    }

    static func reason(_ status: Int) -> String {
        switch status {
        case 400: "Bad Request"
        case 401: "Unauthorized"
        case 408: "Request Timeout"
        case 413: "Content Too Large"
        case 414: "URI Too Long"
        case 431: "Request Header Fields Too Large"
        case 503: "Service Unavailable"
        case 505: "HTTP Version Not Supported"
        default: "Error"
        }
    }

    /// An IMF-fixdate ("Tue, 01 Dec 2026 19:29:40 GMT"), as the Date field wants.
    static func httpDate(_ date: Date) -> String {
        var seconds = time_t(date.timeIntervalSince1970)
        var parts = tm()
        gmtime_r(&seconds, &parts)
        let days = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
        let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
        func two(_ value: Int32) -> String { value < 10 ? "0\(value)" : "\(value)" }
        return "\(days[Int(parts.tm_wday)]), \(two(parts.tm_mday)) \(months[Int(parts.tm_mon)]) \(parts.tm_year + 1900) "
            + "\(two(parts.tm_hour)):\(two(parts.tm_min)):\(two(parts.tm_sec)) GMT"
    }
}
