import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// Keeps reading, and dropping, what a client still sends after the server has answered and
/// closed its side: nginx's lingering close.
///
/// libmicrohttpd answers early (413 from Content-Length, 400 for bad framing, 431) and closes
/// at once. Closing a socket with unread bytes makes the kernel reset the connection, and a
/// client that writes its whole body before reading (Python's urllib and http.client do) sees
/// the reset (BrokenPipeError) instead of the answer. So the close notification hands us a
/// duplicate of every socket libmicrohttpd closes: its own close then only drops its
/// descriptor, and the connection, already shut for writing (the answer and a FIN are on
/// their way), is read here until the client ends it, `seconds` pass or `bytes` were dropped.
final class LingeringClose: @unchecked Sendable {
    // @unchecked: `sockets` is behind `lock`; `started` is set before any other thread runs.
    private let seconds: Double
    private let bytes: Int
    private let maxSockets: Int
    private let lock = NSLock()
    private var sockets: [Int32: (deadline: ContinuousClock.Instant, left: Int)] = [:]
    private let stopping = Atomic<Bool>(false)
    private let finished = DispatchSemaphore(value: 0)
    private var started = false

    init(seconds: Double, bytes: Int, maxSockets: Int) {
        self.seconds = seconds
        self.bytes = bytes
        self.maxSockets = maxSockets
    }

    /// How many sockets are lingering now.
    var count: Int { lock.withLock { sockets.count } }

    func start() {
        guard seconds > 0, bytes > 0 else { return }
        started = true
        let thread = Thread { [self] in
            run()
            finished.signal()
        }
        thread.name = "http-linger"
        thread.start()
    }

    /// Takes over a duplicate of `fd`, which its owner is about to close, when the client may
    /// still be sending: its request was answered early, or unread bytes are waiting. (A
    /// connection closed between requests, say at the idle timeout, needs no lingering.)
    func adopt(_ fd: Int32, answeredEarly: Bool) {
        guard started, !stopping.load(ordering: .relaxed) else { return }
        if !answeredEarly {
            var byte: UInt8 = 0
            guard recv(fd, &byte, 1, Int32(MSG_PEEK | MSG_DONTWAIT)) > 0 else { return }
        }
        let copy = fcntl(fd, F_DUPFD_CLOEXEC, 0)
        guard copy >= 0 else { return }
        // Already done by libmicrohttpd on every close but its "turbo" mode; repeated so the
        // client always gets its end of file after the answer.
        _ = shutdown(copy, Int32(SHUT_WR))
        let admitted = lock.withLock { () -> Bool in
            guard sockets.count < maxSockets else { return false }
            sockets[copy] = (ContinuousClock.now + .milliseconds(Int64(seconds * 1000)), bytes)
            return true
        }
        if !admitted { close(copy) }
    }

    /// Stops reading and closes every lingering socket.
    func stop() {
        guard started, !stopping.exchange(true, ordering: .relaxed) else { return }
        finished.wait()
        let left = lock.withLock { () -> [Int32] in
            defer { sockets = [:] }
            return Array(sockets.keys)
        }
        for fd in left { close(fd) }
    }

    /// poll(2) over the lingering sockets (a few at a time, each for seconds), every 100 ms.
    private func run() {
        var scratch = [UInt8](repeating: 0, count: 64 * 1024)
        while !stopping.load(ordering: .relaxed) {
            var polled = lock.withLock { sockets.keys.map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) } }
            if polled.isEmpty {
                usleep(50_000)
                continue
            }
            if poll(&polled, nfds_t(polled.count), 100) > 0 {
                for entry in polled where entry.revents != 0 { drain(entry.fd, into: &scratch) }
            }
            let now = ContinuousClock.now
            let expired = lock.withLock { sockets.filter { $0.value.deadline <= now }.map(\.key) }
            for fd in expired { finish(fd) }
        }
    }

    private func drain(_ fd: Int32, into scratch: inout [UInt8]) {
        while true {
            let count = scratch.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
            if count > 0 {
                let left = lock.withLock { () -> Int in
                    sockets[fd]?.left -= count
                    return sockets[fd]?.left ?? 0
                }
                if left <= 0 { return finish(fd) }
                continue
            }
            if count < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) { return }
            if count < 0 && errno == EINTR { continue }
            return finish(fd)   // end of file: the client is done; or an error
        }
    }

    private func finish(_ fd: Int32) {
        let owned = lock.withLock { sockets.removeValue(forKey: fd) != nil }
        if owned { close(fd) }
    }
}
