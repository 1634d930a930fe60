import LedgerObservability
import CMicroHTTPD
import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// An HTTP/1.1 server over GNU libmicrohttpd that runs a blocking handler on dedicated threads.
///
/// libmicrohttpd's epoll threads parse requests and send responses. When a request's body is
/// complete, its connection is suspended and the request goes to a pool of worker threads;
/// the handler's response is queued when the connection is resumed. Requests the `runsInline`
/// predicate picks (quick reads) skip that hand-off and run on the polling thread itself.
/// No libmicrohttpd type appears in this API.
///
///     var router = Router()
///     router.add("GET", "/v1/orders/{no}", name: "orders.get")
///     let metrics = MetricsRegistry()
///     let instrumentation = HTTPInstrumentation(metrics: metrics)
///     let server = HTTPServer(configuration: HTTPServerConfiguration(), logger: logger,
///                             observer: instrumentation.observer(logger: logger, router: router)) { request in
///         switch router.resolve(request) {
///         case .failure(let failure): return failure.response
///         case .success(let route): return service.handle(route.name, route.parameters, request)
///         }
///     }
///     instrumentation.sampleInFlight(of: server)
///     let port = try server.start()
///     // on SIGTERM:
///     server.stop()
public final class HTTPServer: Sendable {
    public typealias Handler = @Sendable (HTTPRequest) -> HTTPResponse

    public let configuration: HTTPServerConfiguration
    private let core: ServerCore
    private let state = Mutex<State>(.idle)
    private let watchdogStop = Atomic<Bool>(false)

    private enum State {
        case idle
        case running(Running)
        case stopped
    }

    /// The running daemon. @unchecked Sendable: the pointer is used only under `state`'s lock
    /// (start, stop), never concurrently.
    private struct Running: @unchecked Sendable {
        let daemon: OpaquePointer
        let listenSocket: Int32
        let core: Unmanaged<ServerCore>
        let port: Int
    }

    /// - Parameters:
    ///   - observer: called once per finished request (on a polling thread: keep it quick),
    ///     including requests the layer itself rejected (400, 413, 503).
    ///   - runsInline: true for the requests whose handler is quick and bounded (a read by key):
    ///     they run on the polling thread that parsed them, skipping the hand-off to a worker.
    ///     Everything else (and everything when nil) runs on a worker thread.
    ///   - deferred: tried on the polling thread for every request not run inline, with its
    ///     connection already suspended. It must not block. `.pending` means it will answer
    ///     through the `Responder`, from any thread (a write waiting on a group commit waits
    ///     without a thread); `.declined` hands the request to `handler` on a worker.
    ///   - handler: runs on a worker thread and may block, or on a polling thread for requests
    ///     `runsInline` picks.
    public init(configuration: HTTPServerConfiguration = HTTPServerConfiguration(), logger: Logger = .disabled,
                observer: (@Sendable (HTTPExchange) -> Void)? = nil,
                runsInline: (@Sendable (HTTPRequest) -> Bool)? = nil,
                deferred: (@Sendable (HTTPRequest, Responder) -> DeferredStart)? = nil,
                handler: @escaping Handler) {
        self.configuration = configuration
        self.core = ServerCore(configuration: configuration, logger: logger, observer: observer,
                               runsInline: runsInline, deferred: deferred, handler: handler)
    }

    deinit {
        stop()
    }

    /// The bound port while running.
    public var port: Int? {
        state.withLock { state in
            if case .running(let running) = state { return running.port }
            return nil
        }
    }

    /// Requests between their headers and the end of their response.
    public var requestsInFlight: Int { core.inFlight.value }

    /// Binds, listens, and starts serving; returns the bound port (useful with port 0).
    @discardableResult
    public func start() throws(HTTPServerError) -> Int {
        try state.withLock { (state: inout State) throws(HTTPServerError) -> Int in
            guard case .idle = state else { throw .alreadyStarted }
            let configuration = self.configuration
            guard (0...65_535).contains(configuration.port) else {
                throw .invalidConfiguration("port \(configuration.port) is outside 0-65535")
            }
            guard configuration.maxBodyBytes >= 0, configuration.workerThreads >= 1 else {
                throw .invalidConfiguration("maxBodyBytes must be >= 0 and workerThreads >= 1")
            }
            let (socket, port) = try HTTPServer.listen(configuration)
            let retained = Unmanaged.passRetained(core)
            guard let daemon = HTTPServer.startDaemon(configuration, listenSocket: socket, core: retained) else {
                retained.release()
                close(socket)
                throw .cannotStart("libmicrohttpd refused the configuration")
            }
            state = .running(Running(daemon: daemon, listenSocket: socket, core: retained, port: port))
            core.lingering.start()
            startWatchdog()
            core.logger.info("http server listening", [("host", .string(configuration.host)), ("port", .int(port))])
            return port
        }
    }

    /// Stops gracefully: no new connections, requests in flight finish (up to the grace period,
    /// after which they get 503), every suspended connection is resumed, then the daemon stops.
    /// Idempotent. Must not be called from a handler.
    public func stop() {
        state.withLock { state in
            guard case .running(let running) = state else {
                if case .idle = state {
                    state = .stopped
                    core.pool.shutdown()
                }
                return
            }
            state = .stopped
            core.stopping.store(true, ordering: .relaxed)
            let quiesced = MHD_quiesce_daemon(running.daemon)
            // Stop listening now, so new clients are refused (and fail over) rather than
            // completing a handshake nobody will answer. The fd itself is closed only
            // after MHD_stop_daemon, as libmicrohttpd's threads may still hold it.
            if quiesced >= 0 { _ = shutdown(quiesced, Int32(SHUT_RDWR)) }
            core.inFlight.waitUntilIdle(seconds: configuration.shutdownGraceSeconds)
            core.suspensions.closeAndResumeAll()
            // Let the resumed connections send their answers before the sockets close.
            core.inFlight.waitUntilIdle(seconds: 1)
            MHD_stop_daemon(running.daemon)
            core.lingering.stop()
            if quiesced >= 0 { close(quiesced) }
            watchdogStop.store(true, ordering: .relaxed)
            core.pool.shutdown()
            running.core.release()
            core.logger.info("http server stopped", [("port", .int(running.port))])
        }
    }

    // MARK: start-up

    private func startWatchdog() {
        let core = self.core
        // Resumes handlers that overran the request timeout; exits with the server.
        // Also cuts connections past their head or body deadline (`ConnectionClock`).
        let thread = Thread { [weak self] in
            var tick = 0
            while let server = self, !server.watchdogStop.load(ordering: .relaxed) {
                core.suspensions.resumeOverdue(now: .now)
                tick += 1
                if tick % 2 == 0 { Self.cutOverdue(core) }
                usleep(100_000)
            }
        }
        thread.name = "http-watchdog"
        thread.start()
    }

    private static func cutOverdue(_ core: ServerCore) {
        let cuts = core.connections.cutOverdue(now: .now, limits: core.clockLimits)
        guard !cuts.isEmpty else { return }
        let heads = cuts.filter { $0.phase != .readingBody }.count
        core.logger.warning("connections closed: request head or body not received in time", [
            ("heads", .int(heads)), ("bodies", .int(cuts.count - heads)),
            ("head_timeout_s", .double(core.configuration.headTimeoutSeconds)),
            ("body_timeout_s", .double(core.configuration.bodyTimeoutSeconds)),
        ])
    }

    private static func listen(_ configuration: HTTPServerConfiguration) throws(HTTPServerError) -> (Int32, Int) {
        var hints = addrinfo()
        hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var list: UnsafeMutablePointer<addrinfo>?
        let status = getaddrinfo(configuration.host, String(configuration.port), &hints, &list)
        guard status == 0, let first = list else {
            let why = status == 0 ? "no address" : String(cString: gai_strerror(status))
            throw .cannotListen("cannot resolve \(configuration.host): \(why)")
        }
        defer { freeaddrinfo(list) }
        let info = first.pointee
        let fd = socket(info.ai_family, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw .cannotListen("socket(): \(String(cString: strerror(errno)))") }
        var one: Int32 = 1
        _ = setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        guard bind(fd, info.ai_addr, info.ai_addrlen) == 0 else {
            let why = String(cString: strerror(errno))
            close(fd)
            throw .cannotListen("bind \(configuration.host):\(configuration.port): \(why)")
        }
        guard Glibc.listen(fd, Int32(configuration.listenBacklog)) == 0 else {
            let why = String(cString: strerror(errno))
            close(fd)
            throw .cannotListen("listen: \(why)")
        }
        // Several polling threads accept from this socket: a blocking accept() would stall one.
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let port = withUnsafeMutablePointer(to: &storage) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { address -> Int in
                guard getsockname(fd, address, &length) == 0 else { return -1 }
                if Int32(address.pointee.sa_family) == AF_INET6 {
                    return address.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { Int(UInt16(bigEndian: $0.pointee.sin6_port)) }
                }
                return address.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { Int(UInt16(bigEndian: $0.pointee.sin_port)) }
            }
        }
        guard port > 0 else {
            close(fd)
            throw .cannotListen("getsockname failed")
        }
        return (fd, port)
    }

    private static func startDaemon(_ configuration: HTTPServerConfiguration, listenSocket: Int32,
                                    core: Unmanaged<ServerCore>) -> OpaquePointer? {
        let cls = core.toOpaque()
        let flags = MHD_USE_INTERNAL_POLLING_THREAD.rawValue | MHD_USE_EPOLL.rawValue
            | MHD_ALLOW_SUSPEND_RESUME.rawValue | MHD_USE_ITC.rawValue | MHD_USE_ERROR_LOG.rawValue
        var items: [MHD_OptionItem] = [
            // The logger first, so libmicrohttpd routes every later message through it.
            MHD_OptionItem(option: .EXTERNAL_LOGGER, value: unsafeBitCast(MHDCallbacks.log, to: Int.self), ptr_value: cls),
            MHD_OptionItem(option: .LISTEN_SOCKET, value: Int(listenSocket), ptr_value: nil),
            MHD_OptionItem(option: .CONNECTION_LIMIT, value: max(1, configuration.connectionLimit), ptr_value: nil),
            MHD_OptionItem(option: .CONNECTION_TIMEOUT, value: max(1, configuration.idleTimeoutSeconds), ptr_value: nil),
            MHD_OptionItem(option: .CONNECTION_MEMORY_LIMIT, value: max(4096, configuration.connectionMemoryLimit), ptr_value: nil),
            MHD_OptionItem(option: .NOTIFY_COMPLETED, value: unsafeBitCast(MHDCallbacks.completed, to: Int.self), ptr_value: cls),
            MHD_OptionItem(option: .NOTIFY_CONNECTION, value: unsafeBitCast(MHDCallbacks.connection, to: Int.self), ptr_value: cls),
            MHD_OptionItem(option: .UNESCAPE_CALLBACK, value: unsafeBitCast(MHDCallbacks.keepEscapes, to: Int.self), ptr_value: cls),
            MHD_OptionItem(option: .URI_LOG_CALLBACK, value: unsafeBitCast(MHDCallbacks.requestLine, to: Int.self), ptr_value: cls),
        ]
        if configuration.perIPConnectionLimit > 0 {
            items.append(MHD_OptionItem(option: .PER_IP_CONNECTION_LIMIT, value: configuration.perIPConnectionLimit, ptr_value: nil))
        }
        if configuration.pollingThreads > 1 {
            items.append(MHD_OptionItem(option: .THREAD_POOL_SIZE, value: configuration.pollingThreads, ptr_value: nil))
        }
        items.append(MHD_OptionItem(option: .END, value: 0, ptr_value: nil))
        // libmicrohttpd copies what it needs from the array during the call.
        return items.withUnsafeMutableBufferPointer { buffer in
            withVaList([MHD_OPTION.ARRAY.rawValue, buffer.baseAddress!, MHD_OPTION.END.rawValue]) { arguments in
                MHD_start_daemon_va(flags, 0, MHDCallbacks.acceptPolicy, cls, MHDCallbacks.access, cls, arguments)
            }
        }
    }
}

/// The C entry points. They live here, not in a `main.swift`, so they are not main-actor
/// isolated; each only recovers the `ServerCore` from `cls` and forwards.
enum MHDCallbacks {
    static let access: MHD_AccessHandlerCallback = { cls, connection, url, method, version, upload, uploadSize, slot in
        guard let cls, let connection, let uploadSize, let slot else { return .NO }
        let core = Unmanaged<ServerCore>.fromOpaque(cls).takeUnretainedValue()
        return core.access(connection: connection, url: url, method: method, version: version,
                           upload: upload, uploadSize: uploadSize, slot: slot)
    }

    static let completed: MHD_RequestCompletedCallback = { cls, connection, slot, code in
        guard let cls, let slot else { return }
        Unmanaged<ServerCore>.fromOpaque(cls).takeUnretainedValue().completed(connection: connection, slot: slot, code: code)
    }

    /// Called once the request line is parsed; what it returns becomes the request's slot.
    static let requestLine: @convention(c) (UnsafeMutableRawPointer?, UnsafePointer<CChar>?, OpaquePointer?) -> UnsafeMutableRawPointer? = {
        cls, uri, connection in
        guard let cls else { return nil }
        return Unmanaged<ServerCore>.fromOpaque(cls).takeUnretainedValue().requestLine(connection: connection, uri: uri)
    }

    static let acceptPolicy: MHD_AcceptPolicyCallback = { cls, address, length in
        guard let cls, let address else { return .YES }
        let core = Unmanaged<ServerCore>.fromOpaque(cls).takeUnretainedValue()
        core.peers.accepting(PeerAddressBook.format(address, length: length))
        return .YES
    }

    static let connection: MHD_NotifyConnectionCallback = { cls, connection, socketContext, code in
        guard let cls, let connection else { return }
        let core = Unmanaged<ServerCore>.fromOpaque(cls).takeUnretainedValue()
        switch code {
        case .CONNECTION_NOTIFY_STARTED:
            core.peers.started(connection)
            let fd = ledger_mhd_connection_fd(connection)
            if fd >= 0, let socketContext {
                socketContext.pointee = Unmanaged.passRetained(core.connections.started(connection, fd: fd)).toOpaque()
            }
        case .CONNECTION_NOTIFY_CLOSED:
            core.peers.closed(connection)
            // Sent before libmicrohttpd closes the socket: a duplicate keeps it open to linger.
            core.connections.closed(connection) { fd, early in core.lingering.adopt(fd, answeredEarly: early) }
            if let socketContext, let raw = socketContext.pointee {
                socketContext.pointee = nil
                Unmanaged<ConnectionState>.fromOpaque(raw).release()
            }
        @unknown default: break
        }
    }

    /// Leaves %-escapes in the path and query alone: we decode per segment, so an encoded "/"
    /// stays inside its path segment.
    static let keepEscapes: @convention(c) (UnsafeMutableRawPointer?, OpaquePointer?, UnsafeMutablePointer<CChar>?) -> Int = { _, _, text in
        guard let text else { return 0 }
        return strlen(text)
    }

    static let log: MHD_LogCallback = { cls, format, arguments in
        guard let cls, let format, let arguments else { return }
        var buffer = [CChar](repeating: 0, count: 512)
        _ = vsnprintf(&buffer, buffer.count, format, arguments)
        let length = buffer.firstIndex(of: 0) ?? buffer.count
        var message = String(decoding: buffer[..<length].map { UInt8(bitPattern: $0) }, as: UTF8.self)
        while message.last == "\n" { message.removeLast() }
        let core = Unmanaged<ServerCore>.fromOpaque(cls).takeUnretainedValue()
        // Our access handler returns NO only after answering or logging why itself.
        if message.hasPrefix("Application reported internal error") { return }
        core.logger.warning("libmicrohttpd", [("detail", .string(message))])
    }
}
