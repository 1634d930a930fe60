import Dispatch
import Glibc

#if canImport(Glibc)
#endif

/// SIGTERM and SIGINT for `ledger serve`, taken by one `sigwait` on the main thread.
///
/// Why not a DispatchSource: on Linux it reads a signalfd, which only sees a signal
/// that every thread blocks. Threads started before the source (libmicrohttpd's, the
/// handler pool's) did not block it, so the kernel could hand SIGTERM to one of them,
/// and the source never fired: seen as a server that stayed up after SIGTERM, about
/// one run in ten under load. Blocked here first, before any thread exists, the
/// signals are inherited as blocked by every thread the process starts, and stay
/// pending until `wait` takes one.
struct ShutdownSignals {
    private var set = sigset_t()

    /// Blocks SIGTERM and SIGINT in the calling thread: call it before any other thread starts.
    static func block() -> ShutdownSignals {
        var signals = ShutdownSignals()
        sigemptyset(&signals.set)
        sigaddset(&signals.set, SIGTERM)
        sigaddset(&signals.set, SIGINT)
        pthread_sigmask(SIG_BLOCK, &signals.set, nil)
        return signals
    }

    /// Waits for SIGTERM or SIGINT and answers which came.
    func wait() -> Int32 {
        var set = self.set
        var received: Int32 = 0
        while sigwait(&set, &received) != 0 {}
        return received
    }

    /// Waits up to `seconds` for SIGTERM or SIGINT: which came, or nil when none did.
    func wait(timeoutSeconds seconds: Double) -> Int32? {
        var set = self.set
        let deadline = DispatchTime.now().uptimeNanoseconds + UInt64(max(0, seconds) * 1e9)
        while true {
            let now = DispatchTime.now().uptimeNanoseconds
            guard now < deadline else { return nil }
            let left = deadline - now
            var timeout = timespec(tv_sec: Int(left / 1_000_000_000), tv_nsec: Int(left % 1_000_000_000))
            let received = sigtimedwait(&set, nil, &timeout)
            if received > 0 { return received }
            if errno != EINTR && errno != EAGAIN { return nil }
        }
    }
}
