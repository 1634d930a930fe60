import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// A TCP proxy on loopback in front of PostgreSQL that can turn into a black
/// hole: connections stay open, but nothing is forwarded either way and new
/// connections are accepted and never answered. A database host that vanished
/// from the network looks like this (no refusal, no reset), which a stopped
/// server does not. One difference: the proxy's kernel still acknowledges what
/// is sent to it, as a hung server's would, so the kernel's `tcp_user_timeout`
/// never fires and only the ledger's own deadlines end a wait.
public final class BlackholeProxy: @unchecked Sendable {
    // @unchecked: the descriptors are set once in init; the rest is atomics and a Mutex.
    public let port: Int
    private let listener: Int32
    private let upstreamPort: UInt16
    private let blackholed = Atomic<Bool>(false)
    private let stopped = Atomic<Bool>(false)
    private let sockets = Mutex<[Int32]>([])

    /// Listens on 127.0.0.1 (a free port) and forwards to 127.0.0.1:`upstreamPort`.
    public init(upstreamPort: Int) throws {
        self.upstreamPort = UInt16(upstreamPort)
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var yes: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, socklen_t(MemoryLayout<Int32>.size))
        var address = Self.loopback(port: 0)
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) } }
        guard bound == 0, listen(fd, 64) == 0 else {
            close(fd)
            throw ProxyError.cannotListen(errno)
        }
        _ = withUnsafeMutablePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) } }
        listener = fd
        port = Int(UInt16(bigEndian: address.sin_port))
        let thread = Thread { [self] in acceptLoop() }
        thread.name = "blackhole-proxy"
        thread.start()
    }

    public enum ProxyError: Error { case cannotListen(Int32) }

    /// `url` (a postgresql:// URI) with its host and port replaced by this proxy's.
    public func rewrite(_ url: String) -> String {
        guard var components = URLComponents(string: url) else { return url }
        components.host = "127.0.0.1"
        components.port = port
        return components.string ?? url
    }

    /// From now on nothing passes, and new connections hang.
    public func blackhole() { blackholed.store(true, ordering: .sequentiallyConsistent) }

    /// Forwarding again, for new connections (the ones open meanwhile are dropped, as a
    /// long outage would have done).
    public func restore() {
        let open = sockets.withLock { list -> [Int32] in
            defer { list.removeAll() }
            return list
        }
        open.forEach { shutdown($0, Int32(SHUT_RDWR)) }
        blackholed.store(false, ordering: .sequentiallyConsistent)
    }

    /// Stops accepting and cuts every connection. The listener is closed by the accepting
    /// thread as it leaves (closing it here could hand its number to another descriptor
    /// while that thread still calls accept on it). The proxied sockets are shut down, not
    /// closed, for the same reason: a test leaks a few descriptors.
    public func stop() {
        guard !stopped.exchange(true, ordering: .sequentiallyConsistent) else { return }
        shutdown(listener, Int32(SHUT_RDWR))
        sockets.withLock { list in
            list.forEach { shutdown($0, Int32(SHUT_RDWR)) }
            list.removeAll()
        }
    }

    deinit { stop() }

    /// POLLRDHUP (Linux): the peer closed its end. Not exported to Swift by Glibc.
    private static let peerClosed: Int16 = 0x2000

    private static func loopback(port: UInt16) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = port.bigEndian
        return address
    }

    private func acceptLoop() {
        defer { close(listener) }
        while !stopped.load(ordering: .relaxed) {
            let client = accept(listener, nil, nil)
            if client < 0 {
                if errno == EINTR { continue }
                return
            }
            sockets.withLock { $0.append(client) }
            if blackholed.load(ordering: .sequentiallyConsistent) { continue }   // accepted, never answered
            let server = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            var address = Self.loopback(port: upstreamPort)
            let connected = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(server, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
            guard connected == 0 else {
                close(server)
                shutdown(client, Int32(SHUT_RDWR))
                continue
            }
            sockets.withLock { $0.append(server) }
            for (from, to) in [(client, server), (server, client)] {
                Thread { [self] in pump(from: from, to: to) }.start()
            }
        }
    }

    /// Copies bytes until either side closes; holds them (reads nothing) while black-holed.
    private func pump(from: Int32, to: Int32) {
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        defer { shutdown(to, Int32(SHUT_RDWR)); shutdown(from, Int32(SHUT_RDWR)) }
        while !stopped.load(ordering: .relaxed) {
            if blackholed.load(ordering: .sequentiallyConsistent) {
                var probe = pollfd(fd: from, events: Self.peerClosed, revents: 0)
                if poll(&probe, 1, 20) > 0 && probe.revents & (Self.peerClosed | Int16(POLLHUP | POLLERR | POLLNVAL)) != 0 { return }
                continue
            }
            var ready = pollfd(fd: from, events: Int16(POLLIN), revents: 0)
            let n = poll(&ready, 1, 20)
            if n == 0 || (n < 0 && errno == EINTR) { continue }
            if n < 0 { return }
            if blackholed.load(ordering: .sequentiallyConsistent) { continue }
            let got = buffer.withUnsafeMutableBytes { recv(from, $0.baseAddress, $0.count, 0) }
            if got <= 0 { return }
            var offset = 0
            while offset < got {
                let sent = buffer.withUnsafeBytes { send(to, $0.baseAddress! + offset, got - offset, Int32(MSG_NOSIGNAL)) }
                if sent <= 0 { return }
                offset += sent
            }
        }
    }
}
