import CMicroHTTPD
import Foundation

/// A libmicrohttpd connection pointer.
///
/// @unchecked Sendable: we never dereference it. It is handed back to libmicrohttpd from
/// other threads only through `SuspensionRegistry`, which resumes each suspension exactly once,
/// while the connection is suspended and therefore cannot be freed.
struct ConnectionHandle: @unchecked Sendable {
    let pointer: OpaquePointer
}

/// Why a suspended connection was resumed by the server rather than by its owner.
enum ForcedResume: Sendable {
    case timedOut
    case shuttingDown
}

/// Every suspended connection, so each one is resumed exactly once.
///
/// Suspending and resuming both happen under one lock: a worker finishing, the request-timeout
/// watchdog and `stop()` race to resume, the first wins and the others find nothing. Once closed
/// (during stop) nothing can be suspended again, so `MHD_stop_daemon` never meets a suspended
/// connection (an API violation in libmicrohttpd).
final class SuspensionRegistry: @unchecked Sendable {
    private struct Entry {
        let connection: ConnectionHandle
        let token: AnyObject
        var deadline: ContinuousClock.Instant?
        var onForcedResume: (@Sendable (ForcedResume) -> Void)?
    }

    private let lock = NSLock()
    private var entries: [ObjectIdentifier: Entry] = [:]
    private var closed = false

    /// Suspends `connection` on behalf of `token`; false (and nothing suspended) once closed.
    /// Must be called from the access handler or content reader of that connection.
    func suspend(_ connection: ConnectionHandle, token: AnyObject, deadline: ContinuousClock.Instant? = nil,
                 onForcedResume: (@Sendable (ForcedResume) -> Void)? = nil) -> Bool {
        lock.lock()
        defer { lock.unlock() }
        guard !closed else { return false }
        MHD_suspend_connection(connection.pointer)
        entries[ObjectIdentifier(token)] = Entry(
            connection: connection, token: token, deadline: deadline, onForcedResume: onForcedResume)
        return true
    }

    /// Resumes `token`'s connection after running `prepare`, unless someone resumed it already.
    @discardableResult
    func resume(_ token: AnyObject, prepare: () -> Void = {}) -> Bool {
        lock.lock()
        defer { lock.unlock() }
        guard let entry = entries.removeValue(forKey: ObjectIdentifier(token)) else { return false }
        prepare()
        MHD_resume_connection(entry.connection.pointer)
        return true
    }

    /// Brings `token`'s deadline forward to `deadline` (never later than it was), with
    /// `onTimeout` instead of the usual timeout answer. False when it is not suspended.
    @discardableResult
    func tighten(_ token: AnyObject, deadline: ContinuousClock.Instant,
                 onTimeout: @escaping @Sendable () -> Void) -> Bool {
        lock.lock()
        defer { lock.unlock() }
        let key = ObjectIdentifier(token)
        guard var entry = entries[key] else { return false }
        if let current = entry.deadline, current <= deadline { return true }
        let previous = entry.onForcedResume
        entry.deadline = deadline
        entry.onForcedResume = { reason in
            if case .timedOut = reason { onTimeout() } else { previous?(reason) }
        }
        entries[key] = entry
        return true
    }

    /// Resumes every connection whose deadline has passed.
    func resumeOverdue(now: ContinuousClock.Instant) {
        lock.lock()
        defer { lock.unlock() }
        for (key, entry) in entries {
            guard let deadline = entry.deadline, deadline <= now else { continue }
            entries.removeValue(forKey: key)
            entry.onForcedResume?(.timedOut)
            MHD_resume_connection(entry.connection.pointer)
        }
    }

    /// Refuses further suspensions and resumes everything still suspended.
    func closeAndResumeAll() {
        lock.lock()
        defer { lock.unlock() }
        closed = true
        for entry in entries.values {
            entry.onForcedResume?(.shuttingDown)
            MHD_resume_connection(entry.connection.pointer)
        }
        entries.removeAll()
    }

    /// True while `token`'s connection is suspended and nobody has answered it yet.
    func isWaiting(_ token: AnyObject) -> Bool {
        lock.lock()
        defer { lock.unlock() }
        return entries[ObjectIdentifier(token)] != nil
    }

    var count: Int {
        lock.lock()
        defer { lock.unlock() }
        return entries.count
    }
}
