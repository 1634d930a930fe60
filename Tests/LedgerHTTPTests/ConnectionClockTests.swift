import Testing
@testable import LedgerHTTP

@Suite("The connection clock: deadline phases and their packing")
struct ConnectionClockTests {
    @Test("the deadline phases: a fresh head counts from the accept, a keep-alive wait gets the idle timeout too")
    func clockPhases() {
        let start = ContinuousClock.now
        let limits = ConnectionClock.Limits(headSeconds: 10, bodySeconds: 30, idleSeconds: 30)
        var clock = ConnectionClock(startedAt: start)
        #expect(clock.deadline(limits) == start + .seconds(10))
        clock.enter(.readingHead, at: start + .seconds(4))
        #expect(clock.deadline(limits) == start + .seconds(10), "the request line does not restart a first head")
        clock.enter(.readingBody, at: start + .seconds(5))
        #expect(clock.deadline(limits) == start + .seconds(35))
        clock.enter(.answering, at: start + .seconds(6))
        #expect(clock.deadline(limits) == nil)
        clock.enter(.betweenRequests, at: start + .seconds(7))
        #expect(clock.deadline(limits) == start + .seconds(47))
        clock.enter(.readingHead, at: start + .seconds(20))
        #expect(clock.deadline(limits) == start + .seconds(30))
    }

    @Test("a connection's state keeps its phase and start together in one word, to the nanosecond")
    func connectionStatePacking() {
        let origin = ContinuousClock.now
        let state = ConnectionState(fd: -1, origin: origin, at: origin + .milliseconds(1500))
        #expect(state.clock == ConnectionClock(phase: .fresh, since: origin + .milliseconds(1500)))
        state.enter(.readingHead, at: origin + .seconds(3))
        #expect(state.clock == ConnectionClock(phase: .readingHead, since: origin + .milliseconds(1500)))
        state.enter(.readingBody, at: origin + .nanoseconds(7_000_000_123))
        #expect(state.clock == ConnectionClock(phase: .readingBody, since: origin + .nanoseconds(7_000_000_123)))
        state.enter(.betweenRequests, at: origin + .seconds(86_400 * 400))
        #expect(state.clock == ConnectionClock(phase: .betweenRequests, since: origin + .seconds(86_400 * 400)))
    }
}
