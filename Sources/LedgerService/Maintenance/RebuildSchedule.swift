/// When an online rebuild stops catching up without the append lock and tries its swap,
/// and what it does when a swap could not take its locks in time. Pure decisions; `Rebuild`
/// carries them out.
///
/// Writers wait for a swap attempt at most `lockTimeout` (for the append lock, while a
/// writer commits) plus the final tail's fold plus `lockTimeout` again (for the read
/// models' readers) plus the swap itself; readers at most `lockTimeout`. Catching up
/// until a round finds few events keeps the final tail, folded under the lock, short.
package struct RebuildSchedule: Sendable, Equatable {
    /// How long one lock wait of a swap attempt may last (PostgreSQL's lock_timeout).
    package var lockTimeoutMilliseconds = 150
    /// A catch-up round that found more events than this is followed by another.
    package var tailForSwap = 200
    /// Rounds before the swap is tried however long the tail (a load faster than the fold).
    package var maxRounds = 20
    /// How long swap attempts go on before the rebuild gives up.
    package var patienceSeconds = 120.0
    /// Pause after the first refused attempt, doubled each time up to `maxPause`.
    package var firstPause = 0.05
    package var maxPause = 2.0

    package init() {}

    package enum Step: Equatable {
        case catchUpAgain
        case trySwap
    }

    /// After catch-up round `round` (1 for the first) folded `events` events.
    package func afterCatchUp(round: Int, events: Int) -> Step {
        events > tailForSwap && round < maxRounds ? .catchUpAgain : .trySwap
    }

    package enum Retry: Equatable {
        /// Catch up again after the pause, then try once more.
        case after(seconds: Double)
        case giveUp
    }

    /// Swap attempt `attempt` (1 for the first) could not take a lock in time, `elapsed`
    /// seconds after the first attempt began.
    package func afterRefusedSwap(attempt: Int, elapsed: Double) -> Retry {
        guard elapsed < patienceSeconds else { return .giveUp }
        let pause = min(maxPause, firstPause * Double(1 << min(max(0, attempt - 1), 16)))
        return .after(seconds: min(pause, max(0, patienceSeconds - elapsed)))
    }
}
