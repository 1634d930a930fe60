import Synchronization

/// Random bytes from OpenSSL, drawn a few kilobytes at a time: every event id
/// takes ten random bytes, and `RAND_bytes` per id cost each webhook a system
/// call (OpenSSL's fork check) and a lock in its generator. The bytes are as
/// strong as `Crypto.randomBytes`; only who holds them before use differs (this
/// process's memory, which holds the tokens anyway). Not for a process that forks.
public final class RandomPool: Sendable {
    private struct Buffer {
        var bytes: [UInt8] = []
        var next = 0
    }
    private let buffer = Mutex(Buffer())
    private let refill: Int

    public static let shared = RandomPool()

    public init(refillBytes: Int = 4096) { refill = max(64, refillBytes) }

    /// `count` fresh bytes (never handed out before).
    public func bytes(_ count: Int) -> [UInt8] {
        if count > refill / 4 { return Crypto.randomBytes(count) }
        return buffer.withLock { b in
            if b.next + count > b.bytes.count {
                b.bytes = Crypto.randomBytes(refill)
                b.next = 0
            }
            defer { b.next += count }
            return Array(b.bytes[b.next..<(b.next + count)])
        }
    }
}
