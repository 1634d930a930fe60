import Glibc
@testable import LedgerHTTP
import LedgerObservability
import Testing
#if canImport(Glibc)
#endif

@Suite("Logs")
struct LoggerTests {
    @Test("a log line is one JSON object with time, level, message and fields")
    func logLine() {
        let line = Logger.line(level: .info, message: "request \"done\"",
                               fields: [("status", 200), ("route", "orders.get"), ("message", "dropped"), ("ok", true)],
                               time: "2026-01-01T00:00:00.000Z")
        #expect(line == #"{"time":"2026-01-01T00:00:00.000Z","level":"info","message":"request \"done\"","status":200,"route":"orders.get","ok":true}"#)
        #expect(!line.contains("\n"))
        let now = Logger.now()
        #expect(now.count == 24 && now.hasSuffix("Z"))
    }

    @Test("a logger on a buffered writer writes the same lines as bytes, routine ones batched and warnings at once, in order")
    func bufferedLogLines() throws {
        var fds: [Int32] = [0, 0]
        #expect(pipe(&fds) == 0)
        let writer = BufferedLineWriter(fd: fds[1], flushInterval: 5)
        let logger = Logger(minimumLevel: .info, baseFields: [("component", "http")], writer: writer)
        logger.debug("hidden")
        logger.info("request", [("status", 201), ("route", "orders.get"), ("path", "/v1/orders/A\"1"),
                                ("duration_ms", 1.5), ("ok", true), ("negative", -42)])
        logger.warning("slow", [("status", 503)])   // written at once, after the line before it
        // Read until both lines are there (the writer's thread may have flushed the first alone).
        var received = [UInt8]()
        var chunk = [UInt8](repeating: 0, count: 4096)
        var waiting = pollfd(fd: fds[0], events: Int16(POLLIN), revents: 0)
        while received.filter({ $0 == UInt8(ascii: "\n") }).count < 2, poll(&waiting, 1, 2_000) > 0 {
            let count = read(fds[0], &chunk, chunk.count)
            if count <= 0 { break }
            received += chunk[..<count]
        }
        writer.close()
        close(fds[0]); close(fds[1])
        let lines = String(decoding: received, as: UTF8.self).split(separator: "\n").map(String.init)
        #expect(lines.count == 2, "\(lines)")
        let time = String(try #require(lines.first).dropFirst(9).prefix(24))
        #expect(time.count == 24 && time.hasSuffix("Z"))
        #expect(lines.first == Logger.line(level: .info, message: "request",
                                           fields: [("component", "http"), ("status", 201), ("route", "orders.get"),
                                                    ("path", "/v1/orders/A\"1"), ("duration_ms", 1.5), ("ok", true),
                                                    ("negative", -42)], time: time))
        #expect(lines.first?.contains(#""path":"/v1/orders/A\"1","duration_ms":1.5,"ok":true,"negative":-42}"#) == true)
        #expect(lines.last?.contains(#""level":"warning","message":"slow","component":"http","status":503}"#) == true)
    }
}
