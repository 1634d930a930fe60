import Foundation
import Synchronization
import LedgerTestSupport
import Testing
@testable import LedgerHTTP

extension ServerTests {
    @Suite("stopping and ports")
    struct Stopping {
        @Test("stop() lets a request in flight finish, then refuses connections")
        func gracefulStop() throws {
            var configuration = HTTPServerConfiguration()
            configuration.port = 0
            let server = HTTPServer(configuration: configuration) { _ in
                usleep(300_000)
                return .text(200, "finished")
            }
            let port = try server.start()
            let connection = try TestConnection(port: port)
            try connection.send("GET /slow HTTP/1.1\r\nHost: t\r\n\r\n")
            usleep(50_000)
            let stopped = Atomic<Bool>(false)
            let stopper = Thread {
                server.stop()
                stopped.store(true, ordering: .relaxed)
            }
            stopper.start()
            let response = try connection.readResponse()
            #expect(response.status == 200)
            #expect(response.text == "finished")
            #expect(response.header("Connection")?.lowercased() == "close")
            let deadline = Date(timeIntervalSinceNow: 3)
            while !stopped.load(ordering: .relaxed) && Date() < deadline { usleep(10_000) }
            let didStop = stopped.load(ordering: .relaxed)
            #expect(didStop)
            #expect(throws: (any Error).self) { _ = try TestConnection(port: port) }
        }

        @Test("stop() under load returns promptly and leaves no connection suspended")
        func stopUnderLoad() throws {
            for _ in 0..<3 {
                var configuration = HTTPServerConfiguration()
                configuration.port = 0
                configuration.workerThreads = 4
                configuration.shutdownGraceSeconds = 1
                let server = HTTPServer(configuration: configuration) { request in
                    usleep(request.path == "/slow" ? 2_000_000 : 2_000)
                    return .text(200, "ok")
                }
                let port = try server.start()
                let running = Atomic<Bool>(true)
                let finished = Atomic<Int>(0)
                let clients = (0..<8).map { index in
                    Thread {
                        defer { finished.wrappingAdd(1, ordering: .relaxed) }
                        while running.load(ordering: .relaxed) {
                            guard let connection = try? TestConnection(port: port, timeout: 3) else { return }
                            for _ in 0..<20 {
                                let path = index == 0 ? "/slow" : "/fast"
                                guard (try? connection.send("GET \(path) HTTP/1.1\r\nHost: t\r\n\r\n")) != nil,
                                      (try? connection.readResponse()) != nil else { break }
                            }
                        }
                    }
                }
                clients.forEach { $0.start() }
                usleep(300_000)
                let started = ContinuousClock.now
                server.stop()
                let elapsed = ContinuousClock.now - started
                #expect(elapsed < .seconds(4))
                running.store(false, ordering: .relaxed)
                while finished.load(ordering: .relaxed) < 8 && ContinuousClock.now - started < .seconds(10) { usleep(5_000) }
            }
        }

        @Test("port 0 binds a free port and a taken port is reported")
        func ports() throws {
            try withServer { server, port in
                #expect(port > 0)
                #expect(server.port == port)
                var configuration = HTTPServerConfiguration()
                configuration.port = port
                let second = HTTPServer(configuration: configuration, handler: echo)
                #expect(throws: HTTPServerError.self) { try second.start() }
            }
        }
    }
}
