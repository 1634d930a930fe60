import LedgerObservability
import CMicroHTTPD
import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// The state libmicrohttpd's callbacks reach through their `void *cls` argument.
///
/// @unchecked Sendable: its stored properties are immutable or are themselves thread-safe
/// (pool, registry, counters, Mutex/Atomic).
final class ServerCore: @unchecked Sendable {
    let configuration: HTTPServerConfiguration
    let handler: @Sendable (HTTPRequest) -> HTTPResponse
    /// Which requests run on the polling thread that read them, instead of on a worker.
    let runsInline: (@Sendable (HTTPRequest) -> Bool)?
    /// Tried on the polling thread, after suspending, for requests not run inline.
    let deferred: (@Sendable (HTTPRequest, Responder) -> DeferredStart)?
    let observer: (@Sendable (HTTPExchange) -> Void)?
    let logger: Logger
    let pool: WorkerPool
    let suspensions = SuspensionRegistry()
    let inFlight = InFlightCounter()
    let peers = PeerAddressBook()
    let stopping = Atomic<Bool>(false)

    /// Every open connection's socket and deadline phase.
    let connections = ConnectionTable()
    /// Reads what clients still send after a closing answer.
    let lingering: LingeringClose

    var clockLimits: ConnectionClock.Limits {
        ConnectionClock.Limits(headSeconds: configuration.headTimeoutSeconds, bodySeconds: configuration.bodyTimeoutSeconds,
                               idleSeconds: Double(configuration.idleTimeoutSeconds))
    }

    init(configuration: HTTPServerConfiguration, logger: Logger,
         observer: (@Sendable (HTTPExchange) -> Void)?, runsInline: (@Sendable (HTTPRequest) -> Bool)? = nil,
         deferred: (@Sendable (HTTPRequest, Responder) -> DeferredStart)? = nil,
         handler: @escaping @Sendable (HTTPRequest) -> HTTPResponse) {
        self.configuration = configuration
        self.handler = handler
        self.runsInline = runsInline
        self.deferred = deferred
        self.observer = observer
        self.logger = logger
        self.pool = WorkerPool(threads: configuration.workerThreads, name: "http-worker")
        self.lingering = LingeringClose(seconds: configuration.lingerSeconds, bytes: configuration.lingerBytes,
                                        maxSockets: max(64, configuration.connectionLimit))
    }

    // MARK: request line (polling thread, libmicrohttpd's URI log callback)

    /// The request line is in: the head phase starts, and the request's context is made now so
    /// the completion notification also reports the heads libmicrohttpd answers by itself.
    func requestLine(connection: OpaquePointer?, uri: UnsafePointer<CChar>?) -> UnsafeMutableRawPointer {
        if let connection { connections.enter(.readingHead, connection) }
        let context = RequestContext()
        if let uri {
            // Only the path: the query is never logged.
            let end = strchr(uri, Int32(UInt8(ascii: "?")))
            context.path = end.map { String(decoding: UnsafeRawBufferPointer(start: uri, count: UnsafePointer($0) - uri), as: UTF8.self) }
                ?? String(cString: uri)
        }
        return Unmanaged.passRetained(context).toOpaque()
    }

    // MARK: access handler (polling thread)

    func access(
        connection: OpaquePointer, url: UnsafePointer<CChar>?, method: UnsafePointer<CChar>?,
        version: UnsafePointer<CChar>?, upload: UnsafePointer<CChar>?,
        uploadSize: UnsafeMutablePointer<Int>, slot: UnsafeMutablePointer<UnsafeMutableRawPointer?>
    ) -> MHD_Result {
        let raw = slot.pointee ?? {
            let made = requestLine(connection: nil, uri: nil)
            slot.pointee = made
            return made
        }()
        let context = Unmanaged<RequestContext>.fromOpaque(raw).takeUnretainedValue()
        if !context.begun {
            context.begun = true
            inFlight.begin()
            return begin(context, connection: connection, url: url, method: method, version: version)
        }

        let incoming = uploadSize.pointee
        if incoming > 0 {
            uploadSize.pointee = 0  // always consumed: buffered or discarded
            switch context.phase {
            case .receiving:
                // A body still trickling in past its deadline is answered here, by its own
                // thread, while the watchdog gives it a second's grace before cutting.
                if let clock = ConnectionTable.state(of: connection)?.clock, clock.phase == .readingBody,
                   let deadline = clock.deadline(clockLimits), deadline <= .now {
                    context.body = []
                    return answerDirectly(.problem(status: 408, title: "Request Timeout",
                                                   detail: "The request body did not arrive within \(Int(configuration.bodyTimeoutSeconds)) s."),
                                          context: context, connection: connection)
                }
                // Summed as it streams in, so a chunked body cannot grow past the limit. The
                // answer goes out at once, straight to the socket: libmicrohttpd 0.9.75 cannot
                // queue one in the middle of a body (nor does it show a chunk's declared size).
                if context.body.count + incoming > configuration.maxBodyBytes {
                    context.body = []
                    return answerDirectly(.problem(status: 413, title: "Content Too Large",
                                                   detail: "The request body exceeds the limit of \(configuration.maxBodyBytes) bytes."),
                                          context: context, connection: connection)
                } else if let upload {
                    context.body.append(contentsOf: UnsafeRawBufferPointer(start: upload, count: incoming))
                }
            case .dispatched, .responded:
                break
            }
            return .YES
        }

        switch context.phase {
        case .receiving:
            connections.enter(.answering, connection)
            return dispatch(context, connection: connection)
        case .dispatched:
            let (response, stream) = context.takePending()
                ?? (HTTPResponse.problem(status: 500, title: "Internal Server Error"), nil)
            context.phase = .responded
            return queue(response, stream: stream, context: context, connection: connection, close: false)
        case .responded:
            return .YES
        }
    }

    private func begin(_ context: RequestContext, connection: OpaquePointer, url: UnsafePointer<CChar>?,
                       method: UnsafePointer<CChar>?, version: UnsafePointer<CChar>?) -> MHD_Result {
        connections.enter(.readingBody, connection)
        context.method = method.map { String(cString: $0) } ?? ""
        context.path = url.map { String(cString: $0) } ?? "/"
        context.version = version.map { String(cString: $0) } ?? ""
        // The head as received starts at the method, in libmicrohttpd's read buffer; every
        // string below points into it, which is how HeadInspection finds bytes a NUL hid.
        let headSize = ledger_mhd_request_header_size(connection)
        let base = method.map { UnsafeRawPointer($0) }
        let collector = ValueCollector(base: headSize > 0 ? base : nil, size: headSize)
        collector.cover(method)
        collector.cover(url)
        collector.cover(version)
        context.headers = ServerCore.values(connection, kind: .HEADER_KIND, into: collector)
        let fieldCount = context.headers.count
        context.queryItems = ServerCore.values(connection, kind: .GET_ARGUMENT_KIND, into: collector).map {
            (name: PercentDecoding.decode($0.0), value: PercentDecoding.decode($0.1))
        }
        context.remoteAddress = peers.address(of: connection)
        let clientID = context.headers.first { HTTPRequest.fieldName($0.0) == "x-request-id" }?.1
        context.requestID = RequestID.sanitized(clientID) ?? RequestID.generate()

        if let base = collector.base {
            let lineBytes = version.map { UnsafeRawPointer($0) - base + strlen($0) } ?? 0
            let verdict = HeadInspection.check(
                raw: UnsafeRawBufferPointer(start: base, count: headSize), visible: collector.ranges, fieldCount: fieldCount,
                requestLineBytes: (0...headSize).contains(lineBytes) ? lineBytes : 0,
                maxHeadBytes: configuration.maxHeadBytes, maxFields: configuration.maxHeaderFields)
            switch verdict {
            case .fine:
                break
            case .targetTooLong(let detail):
                return answerDirectly(.problem(status: 414, title: "URI Too Long", detail: detail),
                                      context: context, connection: connection)
            case .tooLarge(let detail):
                // Straight to the socket: a head near the memory limit leaves libmicrohttpd no
                // room to build a response header (it would close with an empty reply).
                return answerDirectly(.problem(status: 431, title: "Request Header Fields Too Large", detail: detail),
                                      context: context, connection: connection)
            case .hiddenBytes:
                return answerDirectly(.problem(status: 400, title: "Bad Request",
                                               detail: "The request target or a header field contains a NUL byte (or a folded header line)."),
                                      context: context, connection: connection)
            }
        }

        switch FramingGuard.check(headers: context.headers, version: context.version,
                                  maxBodyBytes: configuration.maxBodyBytes) {
        case .reject(let status, let title, let detail):
            return reject(context, connection, status: status, title: title, detail: detail)
        case .accept(let contentLength, _):
            if let contentLength, contentLength > 0 { context.body.reserveCapacity(contentLength) }
            return .YES
        }
    }

    /// Answers before the body is read and closes the connection: whatever follows on the wire
    /// cannot be trusted to be the start of a next request.
    private func reject(_ context: RequestContext, _ connection: OpaquePointer,
                        status: Int, title: String, detail: String) -> MHD_Result {
        context.phase = .responded
        connections.answeredEarly(connection)
        return queue(.problem(status: status, title: title, detail: detail), stream: nil,
                     context: context, connection: connection, close: true)
    }

    /// Writes the answer straight to the socket and has libmicrohttpd close the connection
    /// (returning NO from the access handler), for the moments it cannot queue one itself.
    private func answerDirectly(_ response: HTTPResponse, context: RequestContext, connection: OpaquePointer) -> MHD_Result {
        context.phase = .responded
        context.status = response.status
        context.answeredDirectly = true
        connections.answeredEarly(connection)
        if let fd = connections.fd(of: connection) {
            DirectAnswer.send(DirectAnswer.encode(response, requestID: context.requestID), to: fd)
        }
        return .NO
    }

    private func dispatch(_ context: RequestContext, connection: OpaquePointer) -> MHD_Result {
        let request = context.request(body: context.body)
        context.body = []
        if observer != nil {
            var bodiless = request
            bodiless.body = []
            context.dispatched = bodiless
        }
        if let runsInline, runsInline(request) {
            return runInline(request, context: context, connection: connection)
        }
        context.phase = .dispatched
        let timeout = configuration.requestTimeoutSeconds.isFinite
            ? min(max(configuration.requestTimeoutSeconds, 0.001), 86_400) : 86_400
        let deadline = ContinuousClock.now + .seconds(timeout)
        let suspended = suspensions.suspend(
            ConnectionHandle(pointer: connection), token: context, deadline: deadline,
            onForcedResume: { reason in
                switch reason {
                case .timedOut:
                    context.hand(.problem(status: 503, title: "Service Unavailable",
                                          detail: "The request did not finish within the request timeout.",
                                          headers: [("Retry-After", "1")]))
                case .shuttingDown:
                    context.hand(.problem(status: 503, title: "Service Unavailable",
                                          detail: "The server is shutting down.",
                                          headers: [("Retry-After", "1"), ("Connection", "close")]))
                }
            })
        guard suspended else {
            context.phase = .responded
            return queue(.problem(status: 503, title: "Service Unavailable", detail: "The server is shutting down.",
                                  headers: [("Retry-After", "1")]),
                         stream: nil, context: context, connection: connection, close: true)
        }
        // Suspended first: a deferred answer may arrive from another thread at once.
        if let deferred, case .pending = deferred(request, Responder(suspensions: suspensions, context: context)) {
            return .YES
        }
        let accepted = pool.submit { [self] in self.run(request, context: context) }
        if !accepted {
            suspensions.resume(context) {
                context.hand(.problem(status: 503, title: "Service Unavailable", detail: "The server is shutting down.",
                                      headers: [("Retry-After", "1")]))
            }
        }
        return .YES
    }

    /// A quick handler runs right here, on the polling thread: no suspend, no hand-off to a
    /// worker, no resume (each of which costs a thread wake-up). While it runs, the other
    /// connections of this polling thread wait, so only handlers with a short, bounded time
    /// belong here (the request timeout's watchdog cannot interrupt them).
    private func runInline(_ request: HTTPRequest, context: RequestContext, connection: OpaquePointer) -> MHD_Result {
        context.phase = .responded
        let response = handler(request)
        var stream: ResponseStream?
        if case .stream(let producer) = response.body {
            // The producer may block, so it still runs on a worker; the body drains from here.
            stream = ResponseStream(producer: producer, registry: suspensions,
                                    stallSeconds: Double(configuration.idleTimeoutSeconds) * 2)
        }
        let result = queue(response, stream: stream, context: context, connection: connection, close: false)
        if result == .YES, let stream, !pool.submit({ stream.pump() }) {
            stream.cancel()
        }
        return result
    }

    // MARK: worker thread

    private func run(_ request: HTTPRequest, context: RequestContext) {
        // A request that waited in the queue past its timeout (or past shutdown) was already
        // answered 503; running it now would do work, maybe a write, nobody is waiting for.
        guard suspensions.isWaiting(context) else { return }
        let response = handler(request)
        var stream: ResponseStream?
        if case .stream(let producer) = response.body {
            stream = ResponseStream(producer: producer, registry: suspensions,
                                    stallSeconds: Double(configuration.idleTimeoutSeconds) * 2)
        }
        let delivered = suspensions.resume(context) { context.hand(response, stream: stream) }
        if delivered, let stream { stream.pump() }
    }

    // MARK: responses (polling thread)

    private func queue(_ response: HTTPResponse, stream: ResponseStream?, context: RequestContext,
                       connection: OpaquePointer, close: Bool) -> MHD_Result {
        let mhdResponse: OpaquePointer?
        switch response.body {
        case .bytes(let bytes):
            mhdResponse = bytes.withUnsafeBytes { buffer in
                MHD_create_response_from_buffer(
                    buffer.count, UnsafeMutableRawPointer(mutating: buffer.baseAddress), .RESPMEM_MUST_COPY)
            }
        case .stream:
            if let stream {
                stream.attach(ConnectionHandle(pointer: connection))
                let retained = Unmanaged.passRetained(stream).toOpaque()
                mhdResponse = MHD_create_response_from_callback(
                    UInt64.max, 32 * 1024, ServerCore.contentReader, retained, ServerCore.contentReaderFree)
                if mhdResponse == nil {
                    Unmanaged<ResponseStream>.fromOpaque(retained).release()
                }
            } else {
                mhdResponse = nil
            }
        }
        guard let mhdResponse else {
            stream?.cancel()
            logger.error("could not create a response", [("request_id", .string(context.requestID))])
            return .NO
        }
        defer { MHD_destroy_response(mhdResponse) }

        for (name, value) in response.headers where ServerCore.isSafeHeader(name, value) {
            _ = MHD_add_response_header(mhdResponse, name, value)
        }
        _ = MHD_add_response_header(mhdResponse, "X-Request-Id", context.requestID)
        if close || stopping.load(ordering: .relaxed) {
            _ = MHD_add_response_header(mhdResponse, "Connection", "close")
        }
        let status = (100...599).contains(response.status) ? response.status : 500
        let result = MHD_queue_response(connection, UInt32(status), mhdResponse)
        if result == .YES {
            context.status = status
            context.stream = stream
        } else {
            stream?.cancel()
            logger.error("libmicrohttpd refused the response", [("request_id", .string(context.requestID)), ("status", .int(status))])
        }
        return result
    }

    /// Drops fields the server owns (framing) and any name or value that could split the header block.
    static func isSafeHeader(_ name: String, _ value: String) -> Bool {
        guard !name.isEmpty else { return false }
        switch HTTPRequest.fieldName(name) {
        case "content-length", "transfer-encoding", "x-request-id": return false
        case "connection": return value.lowercased() == "close"
        default: break
        }
        let nameOK = name.utf8.allSatisfy { $0 > 32 && $0 < 127 && $0 != UInt8(ascii: ":") }
        let valueOK = value.utf8.allSatisfy { $0 != 0 && $0 != 10 && $0 != 13 }
        return nameOK && valueOK
    }

    // MARK: completion (polling thread)

    func completed(connection: OpaquePointer?, slot: UnsafeMutablePointer<UnsafeMutableRawPointer?>,
                   code: MHD_RequestTerminationCode) {
        if let connection { connections.enter(.betweenRequests, connection) }
        guard let raw = slot.pointee else { return }
        slot.pointee = nil
        let context = Unmanaged<RequestContext>.fromOpaque(raw).takeRetainedValue()
        if context.begun {
            inFlight.end()
        } else if let connection {
            // libmicrohttpd answered the head itself (400, 413, 414, 431, 505): log what it sent.
            context.status = Int(ledger_mhd_http_status(connection))
            if context.status != 0 { connections.answeredEarly(connection) }
            if context.requestID.isEmpty { context.requestID = RequestID.generate() }
        }
        guard let observer else { return }
        let elapsed = ContinuousClock.now - context.started
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        observer(HTTPExchange(
            request: context.dispatched ?? context.request(), status: context.status, duration: seconds,
            completed: code == .REQUEST_TERMINATED_COMPLETED_OK || context.answeredDirectly))
    }

    // MARK: helpers

    /// Collects a connection's values, and the byte ranges of the head they cover.
    final class ValueCollector {
        var values: [(String, String)] = []
        /// The start of the head in libmicrohttpd's buffer, or nil when its size is unknown.
        let base: UnsafeRawPointer?
        let size: Int
        var ranges: [Range<Int>] = []

        init(base: UnsafeRawPointer? = nil, size: Int = 0) {
            self.base = base
            self.size = size
            if base != nil { ranges.reserveCapacity(32) }
        }

        func cover(_ text: UnsafePointer<CChar>?) {
            guard let base, let text else { return }
            let start = UnsafeRawPointer(text) - base
            guard start >= 0, start < size else { return }
            ranges.append(start..<min(size, start + strlen(text)))
        }
    }

    static func values(_ connection: OpaquePointer, kind: MHD_ValueKind, into collector: ValueCollector = ValueCollector())
        -> [(String, String)] {
        collector.values = []
        // Sized from MHD's own count: one allocation, not one per doubling.
        let count = MHD_get_connection_values(connection, kind, nil, nil)
        if count > 0 { collector.values.reserveCapacity(Int(count)) } else { return [] }
        let unmanaged = Unmanaged.passUnretained(collector)
        _ = MHD_get_connection_values(connection, kind, { cls, _, key, value in
            guard let cls, let key else { return .YES }
            let collector = Unmanaged<ValueCollector>.fromOpaque(cls).takeUnretainedValue()
            collector.values.append((String(cString: key), value.map { String(cString: $0) } ?? ""))
            collector.cover(key)
            collector.cover(value)
            return .YES
        }, unmanaged.toOpaque())
        return withExtendedLifetime(collector) { collector.values }
    }

    static let contentReader: MHD_ContentReaderCallback = { cls, _, buffer, capacity in
        guard let cls, let buffer else { return MHD_CONTENT_READER_END_WITH_ERROR }
        let stream = Unmanaged<ResponseStream>.fromOpaque(cls).takeUnretainedValue()
        return stream.read(into: buffer, capacity: capacity)
    }

    static let contentReaderFree: MHD_ContentReaderFreeCallback = { cls in
        guard let cls else { return }
        let stream = Unmanaged<ResponseStream>.fromOpaque(cls).takeRetainedValue()
        stream.cancel()
    }
}

/// Remembers each connection's peer address.
///
/// libmicrohttpd 0.9.75 exposes the address only through variadic functions Swift cannot
/// call, so we catch it in the accept-policy callback and attach it to the connection in the
/// connection-started notification, which libmicrohttpd runs next on the same thread.
final class PeerAddressBook: @unchecked Sendable {
    private let lock = NSLock()
    private var accepted: [UInt: String] = [:]   // by accepting thread
    private var byConnection: [UInt: String] = [:]

    func accepting(_ address: String) {
        let thread = UInt(pthread_self())
        lock.lock()
        accepted[thread] = address
        lock.unlock()
    }

    func started(_ connection: OpaquePointer) {
        let thread = UInt(pthread_self())
        lock.lock()
        if let address = accepted.removeValue(forKey: thread) {
            byConnection[UInt(bitPattern: connection)] = address
        }
        lock.unlock()
    }

    func closed(_ connection: OpaquePointer) {
        lock.lock()
        byConnection.removeValue(forKey: UInt(bitPattern: connection))
        lock.unlock()
    }

    func address(of connection: OpaquePointer) -> String {
        lock.lock()
        defer { lock.unlock() }
        return byConnection[UInt(bitPattern: connection)] ?? "unknown"
    }

    private static func cText(_ text: [CChar]) -> String {
        let length = text.firstIndex(of: 0) ?? text.count
        return String(decoding: text[..<length].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// "127.0.0.1" or "::1" for an IPv4 or IPv6 socket address.
    static func format(_ address: UnsafePointer<sockaddr>, length: socklen_t) -> String {
        var text = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN) + 1)
        switch Int32(address.pointee.sa_family) {
        case AF_INET where length >= socklen_t(MemoryLayout<sockaddr_in>.size):
            let ok = address.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { v4 in
                withUnsafePointer(to: v4.pointee.sin_addr) { inet_ntop(AF_INET, $0, &text, socklen_t(text.count)) != nil }
            }
            return ok ? cText(text) : "unknown"
        case AF_INET6 where length >= socklen_t(MemoryLayout<sockaddr_in6>.size):
            let ok = address.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { v6 in
                withUnsafePointer(to: v6.pointee.sin6_addr) { inet_ntop(AF_INET6, $0, &text, socklen_t(text.count)) != nil }
            }
            return ok ? cText(text) : "unknown"
        default:
            return "unknown"
        }
    }
}
