import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Log lines collected in memory and written to a file descriptor in batches: one `write`
/// every few milliseconds instead of one per line (the access log has a line per request,
/// and that system call was a measurable part of serving a read).
///
/// `writeNow` (used for warnings and errors) writes everything pending at once, so those
/// lines are never held back and stay in order with the lines before them. At most
/// `flushInterval` of routine lines is lost if the process is killed.
public final class BufferedLineWriter: @unchecked Sendable {
    // @unchecked: `pending` and `closed` are only touched under `lock`; `fd` is immutable.
    private let fd: Int32
    private let limit: Int
    private let lock = NSLock()
    private var pending: [UInt8] = []
    private var closed = false
    private let flushed = DispatchSemaphore(value: 0)

    /// Starts a thread that writes pending lines every `flushInterval` seconds.
    public init(fd: Int32 = 2, flushInterval: Double = 0.05, limit: Int = 64 * 1024) {
        self.fd = fd
        self.limit = limit
        pending.reserveCapacity(limit)
        let interval = UInt32(max(0.001, flushInterval) * 1_000_000)
        let thread = Thread { [weak self] in
            while let writer = self, !writer.isClosed {
                writer.flush()
                usleep(interval)
            }
            self?.flushed.signal()
        }
        thread.name = "log-writer"
        thread.start()
    }

    private var isClosed: Bool {
        lock.lock()
        defer { lock.unlock() }
        return closed
    }

    /// Queues one line (a newline is added); written within the flush interval.
    public func write(_ line: String) {
        lock.lock()
        pending.append(contentsOf: line.utf8)
        pending.append(UInt8(ascii: "\n"))
        let full = pending.count >= limit || closed
        lock.unlock()
        if full { flush() }
    }

    /// Queues one line given as UTF-8 bytes (a newline is added).
    public func write(bytes line: [UInt8]) {
        lock.lock()
        pending.append(contentsOf: line)
        pending.append(UInt8(ascii: "\n"))
        let full = pending.count >= limit || closed
        lock.unlock()
        if full { flush() }
    }

    /// Queues one line and writes everything pending now.
    public func writeNow(_ line: String) {
        write(line)
        flush()
    }

    /// Writes everything pending.
    public func flush() {
        lock.lock()
        defer { lock.unlock() }
        guard !pending.isEmpty else { return }
        pending.withUnsafeBytes { buffer in
            var offset = 0
            while offset < buffer.count {
                let written = Glibc.write(fd, buffer.baseAddress! + offset, buffer.count - offset)
                if written <= 0 { break }
                offset += written
            }
        }
        pending.removeAll(keepingCapacity: true)
    }

    /// Writes what is pending and stops the flushing thread; later lines are written at once.
    public func close() {
        lock.lock()
        let wasClosed = closed
        closed = true
        lock.unlock()
        flush()
        if !wasClosed { _ = flushed.wait(timeout: .now() + 1) }
    }
}
