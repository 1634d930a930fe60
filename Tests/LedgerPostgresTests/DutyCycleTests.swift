import Foundation
import LedgerPostgres
import Testing

/// A `DutyCycle` keeps a thread's work to its share of the time, in bursts of about its
/// `burst`: the pauses come often and each is short, and waiting is not counted as work.
@Suite("Duty cycle")
struct DutyCycleTests {
    /// Busy for `seconds` of wall time, calling `step()` every few microseconds; returns
    /// each pause's length (a gap between two checks longer than the work between them).
    static func work(_ duty: DutyCycle, seconds: Double) -> (elapsed: Double, pauses: [Double]) {
        let began = ContinuousClock.now
        var worked = 0.0, pauses: [Double] = []
        while worked < seconds {
            let piece = ContinuousClock.now
            while piece.duration(to: .now) < .microseconds(20) {}
            worked += Self.seconds(piece.duration(to: .now))
            let beforeStep = ContinuousClock.now
            duty.step()
            let paused = Self.seconds(beforeStep.duration(to: .now))
            if paused > 0.0002 { pauses.append(paused) }
        }
        return (Self.seconds(began.duration(to: .now)), pauses)
    }

    static func seconds(_ d: Duration) -> Double {
        Double(d.components.seconds) + Double(d.components.attoseconds) / 1e18
    }

    @Test("at a share of 0.25 a thread's 0.1 s of work takes at least 0.4 s, in short pauses, dozens of them at least")
    func quarter() {
        let duty = DutyCycle(share: 0.25)
        let (elapsed, pauses) = Self.work(duty, seconds: 0.1)
        #expect(elapsed >= 0.1 / 0.25 * 0.9, "the work took its share of the time: \(elapsed) s")
        // A thread preempted mid-burst counts that time as work, so on a loaded machine bursts
        // run longer and pauses are fewer and longer: the bounds leave room for that.
        #expect(duty.pauses >= 50, "it paused often (after every quarter millisecond or so of work): \(duty.pauses) pauses")
        let median = pauses.isEmpty ? 1 : pauses.sorted()[pauses.count / 2]
        #expect(median < 0.005, "a pause is short: the median was \(median) s")
    }

    @Test("a share of 1 never pauses")
    func unpaced() {
        let duty = DutyCycle(share: 1)
        #expect(!duty.isPaced)
        _ = Self.work(duty, seconds: 0.02)
        #expect(duty.pauses == 0)
    }

    @Test("time spent waiting before rested() is not work: the next step does not pause for it")
    func waitingIsNotWork() {
        let duty = DutyCycle(share: 0.1)
        Thread.sleep(forTimeInterval: 0.05)   // waiting on a hand-off, say
        duty.rested()
        let began = ContinuousClock.now
        duty.step()
        #expect(Self.seconds(began.duration(to: .now)) < 0.02, "no pause of nine times the wait")
        // Without rested(), the same wait counts as a burst, and the step pauses for it.
        let other = DutyCycle(share: 0.5)
        Thread.sleep(forTimeInterval: 0.02)
        let then = ContinuousClock.now
        other.step()
        #expect(Self.seconds(then.duration(to: .now)) >= 0.015)
    }
}
