import LedgerCore
import Synchronization

/// One HTTP request as the service sees it: fully read, decoded, and free of C types.
public struct HTTPRequest: Sendable {
    /// The method as sent ("GET", "POST", ...).
    public var method: String
    /// The path without the query, still percent-encoded as sent; `Router` decodes parameters.
    public var path: String
    /// Query parameters, percent-decoded, first value for each name ('+' reads as a space).
    public var query: [String: String]
    /// Every query parameter in order, duplicates included.
    public var queryItems: [(name: String, value: String)]
    /// Header fields with lowercased names; repeated fields are joined with ", ".
    public var headers: [String: String]
    /// The request body (empty when none was sent).
    public var body: [UInt8]
    /// The peer's IP address ("127.0.0.1", "::1"), or "unknown".
    public var remoteAddress: String
    /// The request id: the client's `X-Request-Id` when it is a sane token, else a generated one.
    public var requestID: String

    public init(
        method: String,
        path: String,
        queryItems: [(name: String, value: String)] = [],
        headers: [String: String] = [:],
        body: [UInt8] = [],
        remoteAddress: String = "unknown",
        requestID: String = RequestID.generate()
    ) {
        var lowered: [String: String] = [:]
        for (name, value) in headers {
            let key = Self.fieldName(name)
            if let existing = lowered[key] { lowered[key] = existing + ", " + value } else { lowered[key] = value }
        }
        self.init(method: method, path: path, queryItems: queryItems, lowercasedHeaders: lowered, body: body,
                  remoteAddress: remoteAddress, requestID: requestID)
    }

    /// For the server, whose header names are already lowercased and joined (`RequestContext`).
    init(method: String, path: String, queryItems: [(name: String, value: String)], lowercasedHeaders: [String: String],
         body: [UInt8], remoteAddress: String, requestID: String) {
        self.method = method
        self.path = path
        self.queryItems = queryItems
        var first: [String: String] = [:]
        for item in queryItems where first[item.name] == nil { first[item.name] = item.value }
        self.query = first
        self.headers = lowercasedHeaders
        self.body = body
        self.remoteAddress = remoteAddress
        self.requestID = requestID
    }

    /// The value of a header field, looked up case-insensitively.
    public func header(_ name: String) -> String? {
        headers[Self.fieldName(name)]
    }

    /// A header name lowercased (`HeaderName.lowercased`); this runs for every header of every request.
    static func fieldName(_ name: String) -> String { HeaderName.lowercased(name) }
}

/// Request ids: accepted from clients only when harmless to log and echo.
public enum RequestID {
    /// `candidate` when it is 1-64 characters of `A-Z a-z 0-9 - _ .`, else nil.
    public static func sanitized(_ candidate: String?) -> String? {
        guard let candidate, !candidate.isEmpty, candidate.utf8.count <= 64 else { return nil }
        for byte in candidate.utf8 {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                 UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "_"), UInt8(ascii: "."):
                continue
            default:
                return nil
            }
        }
        return candidate
    }

    /// A fresh id: 32 lowercase hex digits, a random per-process prefix and a counter.
    /// Unique, not secret: it costs no system call per request.
    public static func generate() -> String {
        let count = counter.wrappingAdd(1, ordering: .relaxed).newValue
        return String(unsafeUninitializedCapacity: 32) { buffer in
            hex16(processPrefix, into: buffer, at: 0)
            hex16(count, into: buffer, at: 16)
            return 32
        }
    }

    private static let processPrefix: UInt64 = {
        var generator = SystemRandomNumberGenerator()
        return generator.next()
    }()

    private static let counter = Atomic<UInt64>({
        var generator = SystemRandomNumberGenerator()
        return generator.next() >> 16
    }())

    private static func hex16(_ value: UInt64, into buffer: UnsafeMutableBufferPointer<UInt8>, at offset: Int) {
        let digits: StaticString = "0123456789abcdef"
        for index in 0..<16 {
            let nibble = Int((value >> UInt64(60 - 4 * index)) & 0xF)
            buffer[offset + index] = digits.utf8Start[nibble]
        }
    }
}

/// Percent-decoding for path segments and query components.
public enum PercentDecoding {
    /// Decodes `%HH` escapes; malformed escapes stay as written, invalid UTF-8 becomes U+FFFD.
    public static func decode(_ text: Substring) -> String {
        guard text.utf8.contains(UInt8(ascii: "%")) else { return String(text) }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(text.utf8.count)
        let utf8 = Array(text.utf8)
        var index = 0
        while index < utf8.count {
            let byte = utf8[index]
            if byte == UInt8(ascii: "%"), index + 2 < utf8.count,
               let high = hexValue(utf8[index + 1]), let low = hexValue(utf8[index + 2]) {
                bytes.append(high << 4 | low)
                index += 3
            } else {
                bytes.append(byte)
                index += 1
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    public static func decode(_ text: String) -> String { decode(text[...]) }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return byte - UInt8(ascii: "A") + 10
        default: return nil
        }
    }
}
