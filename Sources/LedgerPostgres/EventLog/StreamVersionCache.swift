import Dispatch

/// What the single writer knows about the log as of its own last commit: the
/// version of each stream it has seen, and the head that commit ended at (its
/// position, hash and recording time). That knowledge is exact while nobody
/// else has appended since, which ledger.append_prepare checks under the
/// append lock (Migration 018); when somebody has, every stream is probed as if
/// nothing were known. A batch that skips append_prepare altogether (see
/// `ChainAppend`, "the round trip skipped") relies on the position's unique
/// index to tell it the head moved.
///
/// @unchecked Sendable: used by one writer thread at a time (the
/// GroupCommitter's), never concurrently.
public final class StreamVersionCache: @unchecked Sendable {
    private(set) var committedHead: Int64?
    private(set) var versions: [String: Int] = [:]
    /// The head event's hash and recording time, as of the last commit.
    private(set) var committedHeadHash: [UInt8]?
    private(set) var committedRecordedMicros: Int64?
    /// PostgreSQL's clock as ledger.append_prepare last read it, and the writer's
    /// monotonic clock when the answer came: a batch that skips the round trip
    /// dates its events from these (`recordingTime`).
    private(set) var clockBase: (postgresMicros: Int64, uptimeNanos: UInt64)?
    /// What the batch in progress learned; kept only if it commits.
    var pending: Pending?
    /// Whether the batch committed last skipped ledger.append_prepare's round trip.
    private(set) var lastCommitSkippedRoundTrip = false
    private let limit: Int

    struct Pending {
        var head: Int64
        var versions: [String: Int]
        var headHash: [UInt8]
        var recordedMicros: Int64
        /// Set when the batch read PostgreSQL's clock (it made the round trip).
        var clockBase: (postgresMicros: Int64, uptimeNanos: UInt64)?
        /// The head had moved since the last commit (another writer appended): the
        /// versions this batch learned replace all the others, which may be stale.
        var replacesVersions = false
    }

    /// How long a reading of PostgreSQL's clock may date batches that skip the round
    /// trip: past it, the next batch makes the round trip and reads the clock again.
    static let clockBaseLifetimeNanos: UInt64 = 1_000_000_000

    /// - Parameter limit: streams remembered at most; past it the cache starts over.
    public init(limit: Int = 100_000) { self.limit = limit }

    /// The version known for `stream`, if the cache is usable at all.
    func version(of stream: String) -> Int? {
        committedHead == nil ? nil : versions[stream]
    }

    /// The head as of the last commit and the time to record a new batch at, when a
    /// batch may skip the round trip: PostgreSQL's clock read less than a second ago,
    /// advanced by the writer's monotonic clock, and never before the head's own time.
    /// Behind PostgreSQL's clock by at most the round trip that read it, so the next
    /// reading is not earlier.
    func recordingTime(now: UInt64 = DispatchTime.now().uptimeNanoseconds)
        -> (head: Int64, hash: [UInt8], recordedMicros: Int64)? {
        guard let committedHead, let committedHeadHash, let committedRecordedMicros, let clockBase,
              now >= clockBase.uptimeNanos, now - clockBase.uptimeNanos < Self.clockBaseLifetimeNanos else { return nil }
        let advanced = clockBase.postgresMicros + Int64((now - clockBase.uptimeNanos) / 1_000)
        return (committedHead, committedHeadHash, max(advanced, committedRecordedMicros))
    }

    /// The batch's transaction committed: what it learned is now known.
    public func commit() {
        guard let pending else {
            lastCommitSkippedRoundTrip = false
            return
        }
        if pending.replacesVersions || versions.count + pending.versions.count > limit {
            versions.removeAll(keepingCapacity: true)
        }
        for (stream, version) in pending.versions { versions[stream] = version }
        committedHead = pending.head
        committedHeadHash = pending.headHash
        committedRecordedMicros = pending.recordedMicros
        if let base = pending.clockBase { clockBase = base }
        lastCommitSkippedRoundTrip = pending.clockBase == nil
        self.pending = nil
    }

    /// The batch failed, or its outcome is unknown: forget everything.
    public func invalidate() {
        versions.removeAll()
        committedHead = nil
        committedHeadHash = nil
        committedRecordedMicros = nil
        clockBase = nil
        pending = nil
    }
}
