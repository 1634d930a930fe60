import Foundation
import Synchronization
import LedgerTestSupport
import Testing
@testable import LedgerHTTP
#if canImport(Glibc)
import Glibc
#endif

/// Counts the requests that reach the handler, so a test can show a refused one never did.
final class Calls: Sendable {
    let count = Atomic<Int>(0)
    var handler: HTTPServer.Handler {
        { [self] request in
            count.wrappingAdd(1, ordering: .relaxed)
            return HTTPResponse.text(200, "path=\(request.path) bytes=\(request.body.count)")
        }
    }
}

func serve<T>(_ configure: (inout HTTPServerConfiguration) -> Void = { _ in },
                      observer: (@Sendable (HTTPExchange) -> Void)? = nil,
                      handler: @escaping HTTPServer.Handler = { request in HTTPResponse.text(200, "bytes=\(request.body.count)") },
                      _ body: (Int) throws -> T) throws -> T {
    var configuration = HTTPServerConfiguration()
    configuration.port = 0
    configuration.workerThreads = 4
    configuration.shutdownGraceSeconds = 5
    configure(&configuration)
    let server = HTTPServer(configuration: configuration, observer: observer, handler: handler)
    let port = try server.start()
    defer { server.stop() }
    return try body(port)
}

func isProblem(_ response: Reply, _ status: Int) -> Bool {
    response.status == status && response.header("Content-Type") == "application/problem+json"
        && response.text.contains("\"status\":\(status)")
}

/// What ordinary clients (and hostile ones) meet at the HTTP layer, one test at a
/// time: most of these wait for deadlines that tests beside them would stretch.
@Suite("Answers that reach ordinary clients, framing answers and slow clients", .serialized)
struct ClientFacingTests {}
