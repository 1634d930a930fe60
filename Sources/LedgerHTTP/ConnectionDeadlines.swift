import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Where a connection is in its current request, and so which deadline applies to it.
///
/// libmicrohttpd's own timeout (`MHD_OPTION_CONNECTION_TIMEOUT`) restarts on every byte, so a
/// client sending one header byte a second would hold its connection for good. These phases
/// bound the whole of each part instead: a new connection's first request head, a keep-alive
/// connection's next request line, the rest of a head once its line is in, and a body.
/// A pure value: `HTTPServer`'s watchdog asks it for the deadline and cuts what is overdue.
struct ConnectionClock: Equatable {
    enum Phase: Equatable {
        /// Accepted, nothing of a request seen yet (the whole head is due by the head deadline).
        case fresh
        /// A request was answered; the next request line is due within the idle timeout.
        case betweenRequests
        /// The request line is in (libmicrohttpd's URI log callback); the headers are due.
        case readingHead
        /// The head is in; the body is due by the body deadline.
        case readingBody
        /// The body is in: the handler and the response run under the request timeout.
        case answering
    }

    struct Limits: Equatable {
        var headSeconds: Double
        var bodySeconds: Double
        var idleSeconds: Double
    }

    private(set) var phase: Phase
    private(set) var since: ContinuousClock.Instant

    init(startedAt instant: ContinuousClock.Instant) {
        phase = .fresh
        since = instant
    }

    /// Moves to `next` at `instant`. A head that began on a fresh connection keeps counting from
    /// the accept, so its request line and headers share one head deadline.
    mutating func enter(_ next: Phase, at instant: ContinuousClock.Instant) {
        if phase == .fresh && next == .readingHead {
            phase = next
            return
        }
        phase = next
        since = instant
    }

    /// When the current phase must be over, or nil when no deadline of ours applies.
    func deadline(_ limits: Limits) -> ContinuousClock.Instant? {
        switch phase {
        case .fresh, .readingHead: since + .milliseconds(Int64(limits.headSeconds * 1000))
        case .betweenRequests: since + .milliseconds(Int64((limits.idleSeconds + limits.headSeconds) * 1000))
        case .readingBody: since + .milliseconds(Int64(limits.bodySeconds * 1000))
        case .answering: nil
        }
    }
}

/// Every open connection's socket and clock, so the watchdog can cut the ones that overrun.
///
/// The polling thread that owns a connection updates its entry; the watchdog reads them all and
/// shuts the overdue sockets down (`shutdown(2)`: libmicrohttpd then reads end-of-file and
/// closes the connection on its own thread). The entry leaves the table in the close
/// notification, which libmicrohttpd sends before it closes the socket, under the same lock the
/// watchdog holds while it shuts one down: so the watchdog never touches a descriptor number
/// that was closed and reused. Striped by connection, as `SuspensionRegistry` is, so the
/// polling threads do not queue on one lock.
final class ConnectionTable: @unchecked Sendable {
    struct Entry {
        let fd: Int32
        var clock: ConnectionClock
        /// Answered before its request was read to the end: the client may still be sending.
        var answeredEarly = false
    }

    /// A connection cut by the watchdog, for the log.
    struct Cut {
        let phase: ConnectionClock.Phase
        let seconds: Double
    }

    private final class Stripe: @unchecked Sendable {
        let lock = NSLock()
        var entries: [UInt: Entry] = [:]
    }

    private let stripes: [Stripe] = (0..<16).map { _ in Stripe() }

    private func stripe(_ connection: OpaquePointer) -> Stripe {
        let key = UInt(bitPattern: connection)
        return stripes[Int((key >> 6) & 15)]
    }

    func started(_ connection: OpaquePointer, fd: Int32, at instant: ContinuousClock.Instant = .now) {
        let stripe = stripe(connection)
        stripe.lock.lock()
        stripe.entries[UInt(bitPattern: connection)] = Entry(fd: fd, clock: ConnectionClock(startedAt: instant))
        stripe.lock.unlock()
    }

    func enter(_ phase: ConnectionClock.Phase, _ connection: OpaquePointer, at instant: ContinuousClock.Instant = .now) {
        let stripe = stripe(connection)
        stripe.lock.lock()
        stripe.entries[UInt(bitPattern: connection)]?.clock.enter(phase, at: instant)
        stripe.lock.unlock()
    }

    /// Notes that the connection was answered before its request was read to the end.
    func answeredEarly(_ connection: OpaquePointer) {
        let stripe = stripe(connection)
        stripe.lock.lock()
        stripe.entries[UInt(bitPattern: connection)]?.answeredEarly = true
        stripe.lock.unlock()
    }

    /// The connection's socket, while it is open.
    func fd(of connection: OpaquePointer) -> Int32? {
        let stripe = stripe(connection)
        stripe.lock.lock()
        defer { stripe.lock.unlock() }
        return stripe.entries[UInt(bitPattern: connection)]?.fd
    }

    /// Removes the connection; `body` runs under the lock with its socket, still open, and
    /// whether it was answered early.
    func closed(_ connection: OpaquePointer, _ body: (Int32, Bool) -> Void) {
        let stripe = stripe(connection)
        stripe.lock.lock()
        defer { stripe.lock.unlock() }
        if let entry = stripe.entries.removeValue(forKey: UInt(bitPattern: connection)) { body(entry.fd, entry.answeredEarly) }
    }

    /// Shuts down every connection past its deadline and returns what was cut.
    func cutOverdue(now: ContinuousClock.Instant, limits: ConnectionClock.Limits) -> [Cut] {
        var cuts: [Cut] = []
        for stripe in stripes {
            stripe.lock.lock()
            for (key, entry) in stripe.entries {
                guard let deadline = entry.clock.deadline(limits), deadline <= now else { continue }
                _ = shutdown(entry.fd, Int32(SHUT_RDWR))
                let elapsed = now - entry.clock.since
                cuts.append(Cut(phase: entry.clock.phase,
                                seconds: Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18))
                // Answering: no deadline of ours, so libmicrohttpd closes it without us.
                stripe.entries[key]?.clock.enter(.answering, at: now)
            }
            stripe.lock.unlock()
        }
        return cuts
    }

    var count: Int {
        stripes.reduce(0) { total, stripe in
            stripe.lock.lock()
            defer { stripe.lock.unlock() }
            return total + stripe.entries.count
        }
    }
}
