#if canImport(Glibc)
import Glibc
#endif

/// A value in a structured log line.
public enum LogValue: Sendable, Equatable, ExpressibleByStringLiteral, ExpressibleByIntegerLiteral,
    ExpressibleByFloatLiteral, ExpressibleByBooleanLiteral {
    case string(String)
    case int(Int)
    case double(Double)
    case bool(Bool)

    public init(stringLiteral value: String) { self = .string(value) }
    public init(integerLiteral value: Int) { self = .int(value) }
    public init(floatLiteral value: Double) { self = .double(value) }
    public init(booleanLiteral value: Bool) { self = .bool(value) }

    fileprivate func append(to out: inout String) {
        switch self {
        case .string(let text):
            out += "\""
            JSONText.appendEscaped(text, to: &out)
            out += "\""
        case .int(let number): out += String(number)
        case .double(let number): out += number.isFinite ? String(number) : "null"
        case .bool(let flag): out += flag ? "true" : "false"
        }
    }
}

/// A structured logger: one JSON object per line with `time`, `level`, `message`, then fields.
/// Pass it down explicitly; it holds no global state. Callers must never put bodies or secrets in fields.
public struct Logger: Sendable {
    public enum Level: Int, Sendable, Comparable, CaseIterable {
        case debug, info, warning, error
        public var name: String {
            switch self {
            case .debug: "debug"
            case .info: "info"
            case .warning: "warning"
            case .error: "error"
            }
        }
        public static func < (lhs: Level, rhs: Level) -> Bool { lhs.rawValue < rhs.rawValue }
    }

    public var minimumLevel: Level
    /// Fields added to every line (component, instance...).
    public var baseFields: [(String, LogValue)]
    private let sink: @Sendable (String) -> Void
    /// Where warnings and errors go when they must not wait in a buffer (nil: `sink`).
    private let urgentSink: (@Sendable (String) -> Void)?

    /// A logger writing to `sink` (by default standard error, one `write` per line).
    public init(minimumLevel: Level = .info, baseFields: [(String, LogValue)] = [],
                sink: @escaping @Sendable (String) -> Void = Logger.standardError) {
        self.minimumLevel = minimumLevel
        self.baseFields = baseFields
        self.sink = sink
        self.urgentSink = nil
    }

    /// A logger writing through `writer`: routine lines in batches, warnings and errors at once.
    public init(minimumLevel: Level = .info, baseFields: [(String, LogValue)] = [], writer: BufferedLineWriter) {
        self.minimumLevel = minimumLevel
        self.baseFields = baseFields
        self.sink = { writer.write($0) }
        self.urgentSink = { writer.writeNow($0) }
    }

    /// A logger that drops everything.
    public static let disabled = Logger(minimumLevel: .error, sink: { _ in })

    /// Writes a line to file descriptor 2 in a single call, so concurrent lines do not interleave.
    public static let standardError: @Sendable (String) -> Void = { line in
        var bytes = Array(line.utf8)
        bytes.append(UInt8(ascii: "\n"))
        bytes.withUnsafeBytes { buffer in
            var offset = 0
            while offset < buffer.count {
                let written = write(2, buffer.baseAddress! + offset, buffer.count - offset)
                if written <= 0 { break }
                offset += written
            }
        }
    }

    /// A copy with more fields on every line.
    public func with(_ fields: [(String, LogValue)]) -> Logger {
        var copy = self
        copy.baseFields += fields
        return copy
    }

    public func log(_ level: Level, _ message: String, _ fields: [(String, LogValue)] = []) {
        guard level >= minimumLevel else { return }
        let sink = level >= .warning ? (urgentSink ?? self.sink) : self.sink
        sink(Logger.line(level: level, message: message, fields: baseFields.isEmpty ? fields : baseFields + fields,
                         time: Logger.now()))
    }

    public func debug(_ message: String, _ fields: [(String, LogValue)] = []) { log(.debug, message, fields) }
    public func info(_ message: String, _ fields: [(String, LogValue)] = []) { log(.info, message, fields) }
    public func warning(_ message: String, _ fields: [(String, LogValue)] = []) { log(.warning, message, fields) }
    public func error(_ message: String, _ fields: [(String, LogValue)] = []) { log(.error, message, fields) }

    /// Renders one line; later fields with a reserved or repeated name are skipped.
    public static func line(level: Level, message: String, fields: [(String, LogValue)], time: String) -> String {
        var out = "{\"time\":\""
        out.reserveCapacity(256)
        JSONText.appendEscaped(time, to: &out)
        out += "\",\"level\":\""
        out += level.name
        out += "\",\"message\":\""
        JSONText.appendEscaped(message, to: &out)
        out += "\""
        // Lines carry a handful of fields: a linear scan for repeats beats hashing them.
        for (index, (name, value)) in fields.enumerated() {
            if name == "time" || name == "level" || name == "message" { continue }
            if fields[..<index].contains(where: { $0.0 == name }) { continue }
            out += ",\""
            JSONText.appendEscaped(name, to: &out)
            out += "\":"
            value.append(to: &out)
        }
        out += "}"
        return out
    }

    /// The current UTC time as RFC 3339 with milliseconds and `Z`.
    public static func now() -> String {
        var spec = timespec()
        clock_gettime(CLOCK_REALTIME, &spec)
        var seconds = time_t(spec.tv_sec)
        var parts = tm()
        gmtime_r(&seconds, &parts)
        // Written digit by digit into one buffer: this runs for every access-log line.
        var text = [UInt8](repeating: 0, count: 24)
        func put(_ value: Int32, _ width: Int, at offset: Int) {
            var rest = max(0, value)
            for position in stride(from: offset + width - 1, through: offset, by: -1) {
                text[position] = UInt8(ascii: "0") + UInt8(rest % 10)
                rest /= 10
            }
        }
        put(parts.tm_year + 1900, 4, at: 0); text[4] = UInt8(ascii: "-")
        put(parts.tm_mon + 1, 2, at: 5); text[7] = UInt8(ascii: "-")
        put(parts.tm_mday, 2, at: 8); text[10] = UInt8(ascii: "T")
        put(parts.tm_hour, 2, at: 11); text[13] = UInt8(ascii: ":")
        put(parts.tm_min, 2, at: 14); text[16] = UInt8(ascii: ":")
        put(parts.tm_sec, 2, at: 17); text[19] = UInt8(ascii: ".")
        put(Int32(spec.tv_nsec / 1_000_000), 3, at: 20); text[23] = UInt8(ascii: "Z")
        return String(decoding: text, as: UTF8.self)
    }
}
