#if canImport(Glibc)
import Glibc
#endif
import LedgerCore

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

    fileprivate func append(to out: inout [UInt8]) {
        switch self {
        case .string(let text):
            out.append(UInt8(ascii: "\""))
            JSONSerializer.writeEscaped(text, to: &out, escapingLineSeparators: true)
            out.append(UInt8(ascii: "\""))
        case .int(let number): out.append(contentsOf: String(number).utf8)
        case .double(let number): out.append(contentsOf: (number.isFinite ? String(number) : "null").utf8)
        case .bool(let flag): out.append(contentsOf: (flag ? "true" : "false").utf8)
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
    /// Routine lines as bytes, when the destination takes them (a `BufferedLineWriter`):
    /// the access log writes a line per request, and a String per line was a copy and an
    /// allocation more than the bytes need.
    private let byteSink: (@Sendable ([UInt8]) -> Void)?

    /// A logger writing to `sink` (by default standard error, one `write` per line).
    public init(minimumLevel: Level = .info, baseFields: [(String, LogValue)] = [],
                sink: @escaping @Sendable (String) -> Void = Logger.standardError) {
        self.minimumLevel = minimumLevel
        self.baseFields = baseFields
        self.sink = sink
        self.urgentSink = nil
        self.byteSink = nil
    }

    /// A logger writing through `writer`: routine lines in batches, warnings and errors at once.
    public init(minimumLevel: Level = .info, baseFields: [(String, LogValue)] = [], writer: BufferedLineWriter) {
        self.minimumLevel = minimumLevel
        self.baseFields = baseFields
        self.sink = { writer.write($0) }
        self.urgentSink = { writer.writeNow($0) }
        self.byteSink = { writer.write(bytes: $0) }
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
        let all = baseFields.isEmpty ? fields : baseFields + fields
        if level < .warning, let byteSink {
            var out = [UInt8]()
            out.reserveCapacity(320)
            Logger.appendLine(level: level, message: message, fields: all, to: &out) { Logger.appendNow(to: &$0) }
            byteSink(out)
            return
        }
        let sink = level >= .warning ? (urgentSink ?? self.sink) : self.sink
        sink(Logger.line(level: level, message: message, fields: all, time: Logger.now()))
    }

    public func debug(_ message: String, _ fields: [(String, LogValue)] = []) { log(.debug, message, fields) }
    public func info(_ message: String, _ fields: [(String, LogValue)] = []) { log(.info, message, fields) }
    public func warning(_ message: String, _ fields: [(String, LogValue)] = []) { log(.warning, message, fields) }
    public func error(_ message: String, _ fields: [(String, LogValue)] = []) { log(.error, message, fields) }

    /// Renders one line; later fields with a reserved or repeated name are skipped.
    public static func line(level: Level, message: String, fields: [(String, LogValue)], time: String) -> String {
        var out = [UInt8]()
        out.reserveCapacity(320)
        appendLine(level: level, message: message, fields: fields, to: &out) { JSONSerializer.writeEscaped(time, to: &$0, escapingLineSeparators: true) }
        return String(decoding: out, as: UTF8.self)
    }

    /// `line`, appended to `out` as UTF-8; `time` writes the time's text (escaped).
    static func appendLine(level: Level, message: String, fields: [(String, LogValue)], to out: inout [UInt8],
                           time: (inout [UInt8]) -> Void) {
        out.append(contentsOf: #"{"time":""#.utf8)
        time(&out)
        out.append(contentsOf: #"","level":""#.utf8)
        out.append(contentsOf: level.name.utf8)
        out.append(contentsOf: #"","message":""#.utf8)
        JSONSerializer.writeEscaped(message, to: &out, escapingLineSeparators: true)
        out.append(UInt8(ascii: "\""))
        // Lines carry a handful of fields: a linear scan for repeats beats hashing them.
        for index in fields.indices {
            let name = fields[index].0
            if name == "time" || name == "level" || name == "message" { continue }
            if fields[..<index].contains(where: { $0.0 == name }) { continue }
            out.append(contentsOf: #",""#.utf8)
            JSONSerializer.writeEscaped(name, to: &out, escapingLineSeparators: true)
            out.append(contentsOf: #"":"#.utf8)
            fields[index].1.append(to: &out)
        }
        out.append(UInt8(ascii: "}"))
    }

    /// The current UTC time as RFC 3339 with milliseconds and `Z`.
    public static func now() -> String {
        var text = [UInt8]()
        text.reserveCapacity(24)
        appendNow(to: &text)
        return String(decoding: text, as: UTF8.self)
    }

    /// `now()`, appended to `out`: written digit by digit, since this runs for every
    /// access-log line.
    static func appendNow(to out: inout [UInt8]) {
        var spec = timespec()
        clock_gettime(CLOCK_REALTIME, &spec)
        var seconds = time_t(spec.tv_sec)
        var parts = tm()
        gmtime_r(&seconds, &parts)
        func put(_ value: Int32, _ width: Int) {
            var divisor: Int32 = 1
            for _ in 1..<width { divisor *= 10 }
            var rest = max(0, value)
            while divisor > 0 {
                out.append(UInt8(ascii: "0") + UInt8((rest / divisor) % 10))
                rest %= divisor
                divisor /= 10
            }
        }
        put(parts.tm_year + 1900, 4); out.append(UInt8(ascii: "-"))
        put(parts.tm_mon + 1, 2); out.append(UInt8(ascii: "-"))
        put(parts.tm_mday, 2); out.append(UInt8(ascii: "T"))
        put(parts.tm_hour, 2); out.append(UInt8(ascii: ":"))
        put(parts.tm_min, 2); out.append(UInt8(ascii: ":"))
        put(parts.tm_sec, 2); out.append(UInt8(ascii: "."))
        put(Int32(spec.tv_nsec / 1_000_000), 3); out.append(UInt8(ascii: "Z"))
    }
}
