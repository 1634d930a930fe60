import Foundation

/// Keeps one thread's work to a share of its time, in short bursts: `step()`, called
/// between small pieces of work, sleeps once the thread has worked for `burst` (a quarter
/// of a millisecond), for as long as it worked times (1 / share - 1).
///
/// Bursts are short because the service beside it waits for the cores about as long as
/// they stay busy, whatever the share: on a 2-core machine, two threads each working
/// 20 ms and resting 47 ms raised the service's p99 from 4-6 ms to 15 ms, while the same
/// share in bursts of 1 ms left it at 6 ms. Their nice value, even SCHED_IDLE, did not
/// change that (docs/operations.md, *Rebuilding the read models*).
///
/// One thread's: not shared. Time spent waiting on something else (a hand-off) is not
/// work; call `rested()` after such a wait.
package final class DutyCycle {
    /// The share of the thread's time spent working, 0 < share <= 1 (1: never sleeps).
    package let share: Double
    package let burst: Duration
    private var began = ContinuousClock.now
    /// How many times `step()` has paused.
    package private(set) var pauses = 0

    package init(share: Double, burst: Duration = .microseconds(250)) {
        self.share = min(1, max(share, 0.01))
        self.burst = burst
    }

    package var isPaced: Bool { share < 1 }

    /// Sleeps if the burst is over.
    package func step() {
        guard share < 1 else { return }
        let worked = began.duration(to: .now)
        guard worked >= burst else { return }
        let seconds = Double(worked.components.seconds) + Double(worked.components.attoseconds) / 1e18
        Thread.sleep(forTimeInterval: seconds * (1 / share - 1))
        pauses += 1
        began = .now
    }

    /// The thread waited (not worked) until now: the burst starts again.
    package func rested() {
        if share < 1 { began = .now }
    }
}
