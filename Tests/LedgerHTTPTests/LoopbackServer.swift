import Foundation
import Synchronization
import LedgerTestSupport
import Testing
@testable import LedgerHTTP

/// The calling thread's name as the kernel knows it (libmicrohttpd names its own threads).
func threadName() -> String {
    ((try? String(contentsOfFile: "/proc/thread-self/comm", encoding: .utf8)) ?? "")
        .trimmingCharacters(in: .whitespacesAndNewlines)
}

/// Echoes what the server decoded, one "key=value" line each, so tests can check parsing.
let echo: HTTPServer.Handler = { request in
    var lines = [
        "method=\(request.method)",
        "path=\(request.path)",
        "remote=\(request.remoteAddress)",
        "bytes=\(request.body.count)",
    ]
    for (name, value) in request.query.sorted(by: { $0.key < $1.key }) { lines.append("query.\(name)=\(value)") }
    if let header = request.header("x-test") { lines.append("x-test=\(header)") }
    lines.append("body=" + String(decoding: request.body, as: UTF8.self))
    return HTTPResponse.text(200, lines.joined(separator: "\n"))
}

func withServer<T>(
    _ configure: (inout HTTPServerConfiguration) -> Void = { _ in },
    observer: (@Sendable (HTTPExchange) -> Void)? = nil,
    runsInline: (@Sendable (HTTPRequest) -> Bool)? = nil,
    handler: @escaping HTTPServer.Handler = echo,
    _ body: (HTTPServer, Int) throws -> T
) throws -> T {
    var configuration = HTTPServerConfiguration()
    configuration.port = 0
    configuration.workerThreads = 8
    configuration.shutdownGraceSeconds = 5
    configure(&configuration)
    let server = HTTPServer(configuration: configuration, observer: observer, runsInline: runsInline, handler: handler)
    let port = try server.start()
    defer { server.stop() }
    return try body(server, port)
}

/// The loopback server's suites, one test at a time: several measure how long
/// answers take, which tests running beside them would disturb.
@Suite("HTTP server over loopback", .serialized)
struct ServerTests {}
