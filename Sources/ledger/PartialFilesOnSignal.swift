import Foundation
import Glibc
import Synchronization

/// Temporary files that SIGINT, SIGTERM or SIGHUP remove before the process ends: an
/// export stopped by Ctrl-C leaves no `FILE.partial` behind.
///
/// The signals are blocked in the calling thread, so every thread started after it
/// inherits them blocked, and one watcher takes them with `sigwait`: the removal runs
/// as ordinary code, not in a signal handler. Then the signal's default action ends the
/// process, so the shell sees it stopped by the signal, as it would have been anyway.
/// Call `arm` before starting any thread that should not take these signals itself.
final class PartialFilesOnSignal: @unchecked Sendable {
    // @unchecked: `previousMask` is written before the watcher starts and read by the arming thread only.
    private enum Phase { case writing, finishing, done }
    private let paths: [String]
    private let phase = Mutex(Phase.writing)
    private var previousMask = sigset_t()

    private init(paths: [String]) { self.paths = paths }

    static let signals: [Int32] = [SIGINT, SIGTERM, SIGHUP]

    static func arm(_ paths: [String]) -> PartialFilesOnSignal {
        let guardian = PartialFilesOnSignal(paths: paths)
        var set = sigset_t()
        sigemptyset(&set)
        // Only the signals that would end the process now: one ignored (SIGHUP under nohup,
        // SIGINT for a script's background job) stays ignored, and the export runs on.
        for signal in signals where Self.endsTheProcess(signal) { sigaddset(&set, signal) }
        pthread_sigmask(SIG_BLOCK, &set, &guardian.previousMask)
        let blocked = set
        let watcher = Thread { guardian.watch(blocked) }
        watcher.start()
        return guardian
    }

    /// The files are being renamed into place: a signal now waits until `finished`, then
    /// ends the process without removing anything. Should the watcher have removed them
    /// already, the process is ending: this waits for that rather than rename anything.
    func finishing() {
        let removed = phase.withLock { phase -> Bool in
            guard phase == .writing else { return true }
            phase = .finishing
            return false
        }
        while removed { pause() }
    }

    /// Whether `signal`'s action is the default one (which ends the process).
    private static func endsTheProcess(_ signal: Int32) -> Bool {
        var current = sigaction()
        guard sigaction(signal, nil, &current) == 0 else { return false }
        return current.__sigaction_handler.sa_handler == nil
    }

    /// The temporary files are gone (renamed, or removed by the caller's own cleanup):
    /// the watcher stops, and the calling thread (the one that armed it) takes signals
    /// again as before; one that came meanwhile then has its default effect.
    func finished() {
        phase.withLock { $0 = .done }
        pthread_sigmask(SIG_SETMASK, &previousMask, nil)
    }

    private func watch(_ set: sigset_t) {
        var set = set
        var tick = timespec(tv_sec: 0, tv_nsec: 100_000_000)
        var received: Int32 = 0
        while received <= 0 {
            if phase.withLock({ $0 == .done }) { return }
            received = sigtimedwait(&set, nil, &tick)
        }
        while true {
            let now = phase.withLock { phase -> Phase in
                if phase == .writing {
                    for path in paths { unlink(path) }
                    phase = .done
                }
                return phase
            }
            if now == .done { break }
            usleep(10_000)   // renames in flight: a few milliseconds
        }
        Self.endBy(received)
    }

    /// Ends the process by `signal`'s default action.
    private static func endBy(_ signal: Int32) -> Never {
        Glibc.signal(signal, SIG_DFL)
        var set = sigset_t()
        sigemptyset(&set)
        sigaddset(&set, signal)
        pthread_sigmask(SIG_UNBLOCK, &set, nil)
        raise(signal)
        _exit(128 + signal)
    }
}
