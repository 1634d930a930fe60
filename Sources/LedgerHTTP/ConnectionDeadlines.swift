import CMicroHTTPD
import Foundation
import Synchronization
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

    init(phase: Phase, since: ContinuousClock.Instant) {
        self.phase = phase
        self.since = since
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

/// One connection's socket and clock, shared by its polling thread (which moves the clock)
/// and the watchdog (which reads it). libmicrohttpd keeps it as the connection's socket
/// context, so a phase change costs one atomic store and no lookup.
final class ConnectionState: Sendable {
    let fd: Int32
    /// The phase in the low 3 bits, the phase's start (nanoseconds after `ConnectionTable.origin`)
    /// above them: one word, so the watchdog never reads a phase with another phase's start.
    private let packed: Atomic<UInt64>
    /// Answered before its request was read to the end: the client may still be sending.
    let answeredEarly = Atomic<Bool>(false)
    /// Shut down by the watchdog.
    let cut = Atomic<Bool>(false)
    private let origin: ContinuousClock.Instant

    init(fd: Int32, origin: ContinuousClock.Instant, at instant: ContinuousClock.Instant) {
        self.fd = fd
        self.origin = origin
        packed = Atomic(Self.pack(ConnectionClock(startedAt: instant), origin: origin))
    }

    var clock: ConnectionClock { Self.unpack(packed.load(ordering: .acquiring), origin: origin) }

    /// Called only by the polling thread that owns the connection (the watchdog never writes).
    func enter(_ phase: ConnectionClock.Phase, at instant: ContinuousClock.Instant) {
        var clock = self.clock
        clock.enter(phase, at: instant)
        packed.store(Self.pack(clock, origin: origin), ordering: .releasing)
    }

    private static let phases: [ConnectionClock.Phase] = [.fresh, .betweenRequests, .readingHead, .readingBody, .answering]

    private static func pack(_ clock: ConnectionClock, origin: ContinuousClock.Instant) -> UInt64 {
        let elapsed = clock.since - origin
        let nanos = UInt64(max(0, elapsed.components.seconds)) * 1_000_000_000 + UInt64(max(0, elapsed.components.attoseconds / 1_000_000_000))
        return nanos << 3 | UInt64(phases.firstIndex(of: clock.phase)!)
    }

    private static func unpack(_ word: UInt64, origin: ContinuousClock.Instant) -> ConnectionClock {
        ConnectionClock(phase: phases[Int(word & 7)], since: origin + .nanoseconds(Int64(word >> 3)))
    }
}

/// Every open connection's state, so the watchdog can cut the ones that overrun.
///
/// The polling thread that owns a connection moves its clock; the watchdog reads them all and
/// shuts the overdue sockets down (`shutdown(2)`: libmicrohttpd then reads end-of-file and
/// closes the connection on its own thread). The entry leaves the table in the close
/// notification, which libmicrohttpd sends before it closes the socket, under the same lock the
/// watchdog holds while it shuts one down: so the watchdog never touches a descriptor number
/// that was closed and reused. Striped by connection, as `SuspensionRegistry` is; the stripes
/// are locked only when a connection opens or closes, and by the watchdog.
final class ConnectionTable: @unchecked Sendable {
    // @unchecked: the stripes' dictionaries are behind their locks.
    /// A connection cut by the watchdog, for the log.
    struct Cut {
        let phase: ConnectionClock.Phase
        let seconds: Double
    }

    private final class Stripe: @unchecked Sendable {
        let lock = NSLock()
        var entries: [UInt: ConnectionState] = [:]
    }

    private let stripes: [Stripe] = (0..<16).map { _ in Stripe() }
    let origin = ContinuousClock.now

    private func stripe(_ connection: OpaquePointer) -> Stripe {
        let key = UInt(bitPattern: connection)
        return stripes[Int((key >> 6) & 15)]
    }

    /// A new connection; what it returns is kept as libmicrohttpd's socket context (retained).
    func started(_ connection: OpaquePointer, fd: Int32, at instant: ContinuousClock.Instant = .now) -> ConnectionState {
        let state = ConnectionState(fd: fd, origin: origin, at: instant)
        let stripe = stripe(connection)
        stripe.lock.lock()
        stripe.entries[UInt(bitPattern: connection)] = state
        stripe.lock.unlock()
        return state
    }

    /// The connection's state, from its socket context (no lock).
    static func state(of connection: OpaquePointer) -> ConnectionState? {
        guard let raw = ledger_mhd_socket_context(connection) else { return nil }
        return Unmanaged<ConnectionState>.fromOpaque(raw).takeUnretainedValue()
    }

    func enter(_ phase: ConnectionClock.Phase, _ connection: OpaquePointer, at instant: ContinuousClock.Instant = .now) {
        Self.state(of: connection)?.enter(phase, at: instant)
    }

    /// Notes that the connection was answered before its request was read to the end.
    func answeredEarly(_ connection: OpaquePointer) {
        Self.state(of: connection)?.answeredEarly.store(true, ordering: .relaxed)
    }

    /// The connection's socket, while it is open.
    func fd(of connection: OpaquePointer) -> Int32? { Self.state(of: connection)?.fd }

    /// Removes the connection; `body` runs under the lock with its socket, still open, and
    /// whether it was answered early.
    func closed(_ connection: OpaquePointer, _ body: (Int32, Bool) -> Void) {
        let stripe = stripe(connection)
        stripe.lock.lock()
        defer { stripe.lock.unlock() }
        if let state = stripe.entries.removeValue(forKey: UInt(bitPattern: connection)) {
            body(state.fd, state.answeredEarly.load(ordering: .relaxed))
        }
    }

    /// Shuts down every connection past its deadline and returns what was cut.
    func cutOverdue(now: ContinuousClock.Instant, limits: ConnectionClock.Limits) -> [Cut] {
        var cuts: [Cut] = []
        for stripe in stripes {
            stripe.lock.lock()
            for state in stripe.entries.values {
                let clock = state.clock
                // A body gets a second more: one still trickling in is answered 408 by its own
                // polling thread when its next bytes arrive (only a silent one is cut here).
                let grace: Duration = clock.phase == .readingBody ? .seconds(1) : .zero
                guard let deadline = clock.deadline(limits), deadline + grace <= now else { continue }
                // Once per connection: shutdown(2) again would only repeat the cut.
                guard !state.cut.exchange(true, ordering: .relaxed) else { continue }
                _ = shutdown(state.fd, Int32(SHUT_RDWR))
                let elapsed = now - clock.since
                cuts.append(Cut(phase: clock.phase,
                                seconds: Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18))
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
