import Foundation

/// How a paced rebuild (`--pace`) shares the machine: after each piece of work (a batch
/// folded, a chunk of rows written) it pauses for as long as the piece took, times
/// (1 / pace - 1), so that work is `pace` of the build's time. The pieces are small: the
/// service's commits share the WAL with the rebuild's writes, and a long burst of writes
/// at full speed is what slows them, not the share.
final class RebuildPacer {
    private let pace: Double
    private var since = ContinuousClock.now

    /// `pace`: 0 < pace <= 1; at 1 it never pauses.
    init(pace: Double) { self.pace = min(1, max(pace, 0.01)) }

    /// A piece of work has ended (it began when the last pause did): pauses in proportion.
    func pieceEnded() {
        guard pace < 1 else { return }
        Thread.sleep(forTimeInterval: Rebuild.seconds(since: since) * (1 / pace - 1))
        since = ContinuousClock.now
    }
}
