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
/// Suspending and resuming both happen under a lock: a worker finishing, the request-timeout
/// watchdog and `stop()` race to resume, the first wins and the others find nothing. Once closed
/// (during stop) nothing can be suspended again, so `MHD_stop_daemon` never meets a suspended
/// connection (an API violation in libmicrohttpd).
///
/// The entries are split into stripes by token, each with its own lock: every request takes
/// a lock here two or three times (suspend, deadline, resume) from the polling threads and
/// the thread answering a group commit, and a single lock made those threads queue on one
/// another (measured as futex waits and wake-ups on every webhook).
final class SuspensionRegistry: @unchecked Sendable {
    private struct Entry {
        let connection: ConnectionHandle
        let token: AnyObject
        var deadline: ContinuousClock.Instant?
        var onForcedResume: (@Sendable (ForcedResume) -> Void)?
    }

    private final class Stripe: @unchecked Sendable {
        let lock = NSLock()
        var entries: [ObjectIdentifier: Entry] = [:]
        var closed = false
    }

    private static let stripeCount = 16   // the hash's top 4 bits
    private let stripes: [Stripe] = (0..<SuspensionRegistry.stripeCount).map { _ in Stripe() }

    /// A multiplicative hash of the token's address (Fibonacci hashing): objects of one
    /// size the allocator places a fixed stride apart still spread over the stripes.
    private func stripe(_ token: AnyObject) -> Stripe {
        let address = UInt64(UInt(bitPattern: Unmanaged.passUnretained(token).toOpaque()))
        return stripes[Int((address &* 0x9E37_79B9_7F4A_7C15) >> 60)]
    }

    /// Suspends `connection` on behalf of `token`; false (and nothing suspended) once closed.
    /// Must be called from the access handler or content reader of that connection.
    func suspend(_ connection: ConnectionHandle, token: AnyObject, deadline: ContinuousClock.Instant? = nil,
                 onForcedResume: (@Sendable (ForcedResume) -> Void)? = nil) -> Bool {
        let stripe = stripe(token)
        stripe.lock.lock()
        defer { stripe.lock.unlock() }
        guard !stripe.closed else { return false }
        MHD_suspend_connection(connection.pointer)
        stripe.entries[ObjectIdentifier(token)] = Entry(
            connection: connection, token: token, deadline: deadline, onForcedResume: onForcedResume)
        return true
    }

    /// Resumes `token`'s connection after running `prepare`, unless someone resumed it already.
    @discardableResult
    func resume(_ token: AnyObject, prepare: () -> Void = {}) -> Bool {
        let stripe = stripe(token)
        stripe.lock.lock()
        defer { stripe.lock.unlock() }
        guard let entry = stripe.entries.removeValue(forKey: ObjectIdentifier(token)) else { return false }
        prepare()
        MHD_resume_connection(entry.connection.pointer)
        return true
    }

    /// Brings `token`'s deadline forward to `deadline` (never later than it was), with
    /// `onTimeout` instead of the usual timeout answer. False when it is not suspended.
    @discardableResult
    func tighten(_ token: AnyObject, deadline: ContinuousClock.Instant,
                 onTimeout: @escaping @Sendable () -> Void) -> Bool {
        let stripe = stripe(token)
        stripe.lock.lock()
        defer { stripe.lock.unlock() }
        let key = ObjectIdentifier(token)
        guard var entry = stripe.entries[key] else { return false }
        if let current = entry.deadline, current <= deadline { return true }
        let previous = entry.onForcedResume
        entry.deadline = deadline
        entry.onForcedResume = { reason in
            if case .timedOut = reason { onTimeout() } else { previous?(reason) }
        }
        stripe.entries[key] = entry
        return true
    }

    /// Resumes every connection whose deadline has passed. (`onForcedResume` runs under a
    /// stripe's lock: it must not call back into the registry.)
    func resumeOverdue(now: ContinuousClock.Instant) {
        for stripe in stripes {
            stripe.lock.lock()
            for (key, entry) in stripe.entries {
                guard let deadline = entry.deadline, deadline <= now else { continue }
                stripe.entries.removeValue(forKey: key)
                entry.onForcedResume?(.timedOut)
                MHD_resume_connection(entry.connection.pointer)
            }
            stripe.lock.unlock()
        }
    }

    /// Refuses further suspensions and resumes everything still suspended. Stripes close one
    /// after another; a suspension made meanwhile in a later stripe is resumed when its turn
    /// comes, so nothing is left suspended when this returns.
    func closeAndResumeAll() {
        for stripe in stripes {
            stripe.lock.lock()
            stripe.closed = true
            for entry in stripe.entries.values {
                entry.onForcedResume?(.shuttingDown)
                MHD_resume_connection(entry.connection.pointer)
            }
            stripe.entries.removeAll()
            stripe.lock.unlock()
        }
    }

    /// True while `token`'s connection is suspended and nobody has answered it yet.
    func isWaiting(_ token: AnyObject) -> Bool {
        let stripe = stripe(token)
        stripe.lock.lock()
        defer { stripe.lock.unlock() }
        return stripe.entries[ObjectIdentifier(token)] != nil
    }

    var count: Int {
        stripes.reduce(0) { total, stripe in
            stripe.lock.lock()
            defer { stripe.lock.unlock() }
            return total + stripe.entries.count
        }
    }
}
