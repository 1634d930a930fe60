import CMicroHTTPD
import Foundation

/// A streamed body: a worker thread calls the producer and fills a small buffer; libmicrohttpd's
/// content reader drains it on the polling thread, suspending the connection while it is empty.
///
/// The polling thread never waits for the producer (which may block on the database), and the
/// producer never runs more than `highWater` bytes ahead of the client, so memory stays flat.
final class ResponseStream: @unchecked Sendable {
    private let producer: @Sendable () throws -> [UInt8]?
    private let registry: SuspensionRegistry
    private let highWater: Int
    private let stallSeconds: Double

    // `condition` guards everything below.
    private let condition = NSCondition()
    private var chunks: [[UInt8]] = []
    private var offset = 0
    private var buffered = 0
    private var consumed = 0
    private var finished = false
    private var failed = false
    private var cancelled = false
    private var readerWaiting = false
    private var connection: ConnectionHandle?

    init(producer: @escaping @Sendable () throws -> [UInt8]?, registry: SuspensionRegistry,
         highWater: Int = 256 * 1024, stallSeconds: Double) {
        self.producer = producer
        self.registry = registry
        self.highWater = highWater
        self.stallSeconds = stallSeconds
    }

    /// Called by the polling thread once, just before the response is queued.
    func attach(_ connection: ConnectionHandle) {
        condition.lock()
        self.connection = connection
        condition.unlock()
    }

    /// libmicrohttpd's content reader: bytes copied, 0 after suspending, or an end marker.
    func read(into buffer: UnsafeMutablePointer<CChar>, capacity: Int) -> Int {
        condition.lock()
        defer { condition.unlock() }
        if !chunks.isEmpty {
            guard capacity > 0 else { return 0 }
            var written = 0
            while written < capacity, let chunk = chunks.first {
                let count = min(capacity - written, chunk.count - offset)
                chunk.withUnsafeBytes { source in
                    UnsafeMutableRawPointer(buffer + written)
                        .copyMemory(from: source.baseAddress! + offset, byteCount: count)
                }
                written += count
                offset += count
                if offset == chunk.count {
                    chunks.removeFirst()
                    offset = 0
                }
            }
            buffered -= written
            consumed += written
            condition.broadcast()
            return written
        }
        if failed || cancelled { return MHD_CONTENT_READER_END_WITH_ERROR }
        if finished { return MHD_CONTENT_READER_END_OF_STREAM }
        guard let connection, registry.suspend(connection, token: self) else {
            cancelled = true
            condition.broadcast()
            return MHD_CONTENT_READER_END_WITH_ERROR
        }
        readerWaiting = true
        return 0
    }

    /// The response is gone (sent, client vanished, or never queued): stop producing.
    func cancel() {
        condition.lock()
        cancelled = true
        connection = nil
        condition.broadcast()
        condition.unlock()
    }

    /// Runs the producer on the calling worker thread until it ends, fails, or is cancelled.
    func pump() {
        while true {
            condition.lock()
            var lastConsumed = consumed
            var lastProgress = ContinuousClock.now
            while buffered >= highWater && !cancelled {
                _ = condition.wait(until: Date(timeIntervalSinceNow: 0.5))
                if consumed != lastConsumed {
                    lastConsumed = consumed
                    lastProgress = .now
                } else if ContinuousClock.now - lastProgress > .seconds(stallSeconds) {
                    // Normally the idle timeout closes a client that stopped reading, which
                    // cancels us; this is the backstop if that notification never comes.
                    cancelled = true
                }
            }
            let stop = cancelled
            condition.unlock()
            if stop { return }

            var next: [UInt8]?
            var threw = false
            do { next = try producer() } catch { threw = true }

            condition.lock()
            if threw {
                failed = true
            } else if let next {
                if !next.isEmpty {
                    chunks.append(next)
                    buffered += next.count
                }
            } else {
                finished = true
            }
            if readerWaiting {
                readerWaiting = false
                registry.resume(self)
            }
            let done = finished || failed || cancelled
            condition.unlock()
            if done { return }
        }
    }
}
