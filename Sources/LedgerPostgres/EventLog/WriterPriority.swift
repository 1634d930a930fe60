import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// The scheduling priority the single writer thread asked for, and what it got.
///
/// Every append passes through one writer thread and its PostgreSQL backend in turn,
/// so the time that thread waits for a core, runnable, is time the whole ledger waits.
/// Measured under webhook load on 2 cores shared with the request threads (`/proc/<tid>/schedstat`): at nice 0 the writer waited for a core 45% of the wall
/// clock; at nice -10, 22%, and webhooks/s rose by about 8%. Raising a priority needs
/// root, `CAP_SYS_NICE`, or an `RLIMIT_NICE` that allows it (systemd: `LimitNICE=-10`);
/// without it the writer runs at the nice it inherited, and the service says so.
public struct WriterPriority: Sendable, Equatable, CustomStringConvertible {
    /// The nice value asked for (0: leave the inherited priority alone).
    public let requested: Int32
    /// Whether the writer thread runs at `requested`.
    public let applied: Bool
    /// `errno` of the refusal, when not applied.
    public let errorCode: Int32
    /// The writer thread's kernel id (for /proc/<pid>/task/<id>).
    public let threadID: Int32

    public var description: String {
        if requested == 0 { return "the writer thread keeps its inherited priority" }
        if applied { return "the writer thread runs at nice \(requested)" }
        return "the writer thread could not be set to nice \(requested) (\(String(cString: strerror(errorCode)))): it keeps its inherited priority; run with CAP_SYS_NICE or an RLIMIT_NICE allowing it (systemd LimitNICE=\(requested))"
    }

    /// Sets the calling thread's nice value; a request of 0 changes nothing.
    static func apply(_ nice: Int32) -> WriterPriority {
        let thread = currentThreadID()
        guard nice != 0 else { return WriterPriority(requested: 0, applied: true, errorCode: 0, threadID: thread) }
        // On Linux nice is per thread: PRIO_PROCESS with a thread's id sets that thread only.
        let code: Int32 = setpriority(__priority_which_t(PRIO_PROCESS.rawValue), id_t(thread), nice) == 0 ? 0 : errno
        return WriterPriority(requested: nice, applied: code == 0, errorCode: code, threadID: thread)
    }

    /// The calling thread's kernel id, from `/proc/thread-self` ("PID/task/TID"): glibc's
    /// gettid() is not visible to Swift, and syscall(2) is variadic.
    static func currentThreadID() -> Int32 {
        var link = [CChar](repeating: 0, count: 64)
        let count = readlink("/proc/thread-self", &link, link.count - 1)
        guard count > 0 else { return 0 }
        let text = String(decoding: link.prefix(count).map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return text.split(separator: "/").last.flatMap { Int32($0) } ?? 0
    }
}

/// Hands the writer thread's `WriterPriority` to the thread that started it.
final class WriterPriorityHandoff: @unchecked Sendable {
    private let ready = DispatchSemaphore(value: 0)
    private let lock = NSLock()
    private var outcome: WriterPriority?   // guarded by lock

    func deliver(_ priority: WriterPriority) {
        lock.withLock { outcome = priority }
        ready.signal()
    }

    /// The outcome, waiting up to `seconds` for the writer thread to report it.
    func wait(seconds: Double) -> WriterPriority? {
        if lock.withLock({ outcome }) == nil, ready.wait(timeout: .now() + seconds) == .success {
            ready.signal()   // for any other caller waiting at the same time
        }
        return lock.withLock { outcome }
    }
}
