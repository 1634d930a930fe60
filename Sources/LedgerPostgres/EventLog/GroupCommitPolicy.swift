/// What the group committer needs to know of a submission to batch it.
protocol GroupCommitSubmission {
    /// How many events it carries: batches are bounded in events, not submissions.
    var eventCount: Int { get }
}

/// The group committer's decisions, without IO: which submissions are admitted,
/// which form the next batch, and what follows a batch's commit or failure
/// (answer it, try it once more, or try each of its submissions alone).
///
/// `GroupCommitter` keeps one under its lock, tells it what happened and carries out
/// the `Action` it answers. Nothing here touches a thread, a clock or the database,
/// so every decision can be tested as a sequence of events.
///
/// The writer's cycle: `writerReady` answers `.commit(batch)`; the writer appends and
/// commits the batch in one transaction and reports `batchCommitted` or
/// `batchFailed`, which answer `.succeed`, `.fail`, `.retry` (the same batch once
/// more) or `.commit` (the first submission of a failed batch, alone); after an
/// answer (`.succeed`, `.fail`) the writer asks `writerReady` again.
///
/// Invariants: every admitted submission is answered exactly once, in the order
/// of admission, and only after the transaction that carried it committed or
/// failed for good; a batch is the longest run of queued submissions within
/// `maxBatch` events (at least one submission); one submission's bad data fails
/// that submission alone.
struct GroupCommitPolicy<Submission: GroupCommitSubmission> {
    /// What the caller of `submitted` does.
    enum SubmitAction: Equatable {
        /// Queued: wake the writer.
        case wakeWriter
        /// Answer the submission at once with this refusal; nothing was queued.
        case refuse(Refusal)
    }

    /// Why a submission was refused (the caller may try again later).
    enum Refusal: Equatable {
        case shuttingDown
        /// This many events already wait for a commit: while the database stalls,
        /// callers that gave up and retry must not pile up in memory.
        case writerBehind(waitingEvents: Int)
    }

    /// What the writer does next.
    enum Action {
        /// Nothing to do: wait until woken, then ask `writerReady` again.
        case wait
        /// Append and commit these submissions' events in one transaction, then
        /// report `batchCommitted` or `batchFailed`.
        case commit([Submission])
        /// The same, for the batch whose attempt just failed: its one more attempt.
        case retry([Submission])
        /// Answer each with its share of the outcomes just committed, in order; then `writerReady`.
        case succeed([Submission])
        /// Answer each with the error of the attempt that just failed; then `writerReady`.
        case fail([Submission])
        /// Shut down and nothing left: the writer ends, and whoever waits in `shutdown` may return.
        case stop
    }

    /// What `shutdownRequested` leaves to the caller.
    enum ShutdownAction: Equatable {
        /// Wake the writer (it commits what is queued, then answers `.stop`) and wait until `writerStopped`.
        case waitForWriter
        /// The writer has already stopped.
        case stopped
    }

    /// How a batch's attempt failed, as far as the policy cares.
    struct Failure: Equatable {
        /// One more attempt of the same batch may well succeed: the projector changed how
        /// it writes, or a guess of the writer's (its probe hints, the chain's head, its
        /// clock) was wrong and the next attempt checks instead of guessing.
        var worthRetrying: Bool
        /// The database could not be reached: each submission alone would fail the same
        /// way, so none is tried alone.
        var unavailable: Bool

        /// Perhaps one submission's data (a value an index refuses): its batch is split.
        static var refused: Failure { Failure(worthRetrying: false, unavailable: false) }
        static var transient: Failure { Failure(worthRetrying: true, unavailable: false) }
        static var unavailable: Failure { Failure(worthRetrying: false, unavailable: true) }
    }

    /// The writer's side.
    private enum Writer {
        /// Between attempts. `alone` holds what is left of a failed batch: each is tried
        /// by itself before anything else is taken from the queue.
        case between(alone: ArraySlice<Submission>)
        /// A transaction carrying `batch` is under way; `retried` when it is the batch's second attempt.
        case attempting(batch: [Submission], retried: Bool, alone: ArraySlice<Submission>)
        case stopped
    }

    let maxBatch: Int
    let maxQueuedEvents: Int
    private var queue: [Submission] = []
    private var queuedEvents = 0
    private var writer = Writer.between(alone: [])
    /// Shutdown was asked for: nothing more is admitted.
    private(set) var isShuttingDown = false

    /// - Parameters:
    ///   - maxBatch: events a batch takes at most, unless its one submission alone has more.
    ///   - maxQueuedEvents: events that may wait for the writer before submissions are refused.
    init(maxBatch: Int, maxQueuedEvents: Int) {
        self.maxBatch = maxBatch
        self.maxQueuedEvents = max(1, maxQueuedEvents)
    }

    /// The writer has answered `.stop`.
    var writerStopped: Bool {
        if case .stopped = writer { return true }
        return false
    }

    /// A caller submits; an empty queue takes a submission of any size.
    mutating func submitted(_ submission: Submission) -> SubmitAction {
        if isShuttingDown { return .refuse(.shuttingDown) }
        if queuedEvents + submission.eventCount > maxQueuedEvents && queuedEvents > 0 {
            return .refuse(.writerBehind(waitingEvents: queuedEvents))
        }
        queuedEvents += submission.eventCount
        queue.append(submission)
        return .wakeWriter
    }

    /// Stop admitting; the writer commits what is queued, then stops.
    mutating func shutdownRequested() -> ShutdownAction {
        isShuttingDown = true
        return writerStopped ? .stopped : .waitForWriter
    }

    /// The writer has nothing in hand (at start, or after carrying out an answer).
    mutating func writerReady() -> Action {
        switch writer {
        case .between(let alone):
            if let next = alone.first {
                writer = .attempting(batch: [next], retried: false, alone: alone.dropFirst())
                return .commit([next])
            }
            if queue.isEmpty {
                guard isShuttingDown else { return .wait }
                writer = .stopped
                return .stop
            }
            let batch = takeBatch()
            writer = .attempting(batch: batch, retried: false, alone: [])
            return .commit(batch)
        case .stopped:
            return .stop
        case .attempting:
            preconditionFailure("the writer asked for work while a batch was under way")
        }
    }

    /// The transaction of the batch last handed out committed.
    mutating func batchCommitted() -> Action {
        guard case .attempting(let batch, _, let alone) = writer else {
            preconditionFailure("a batch committed that was not under way")
        }
        writer = .between(alone: alone)
        return .succeed(batch)
    }

    /// The transaction of the batch last handed out rolled back, or its outcome is unknown.
    mutating func batchFailed(_ failure: Failure) -> Action {
        guard case .attempting(let batch, let retried, let alone) = writer else {
            preconditionFailure("a batch failed that was not under way")
        }
        if failure.worthRetrying && !retried {
            writer = .attempting(batch: batch, retried: true, alone: alone)
            return .retry(batch)
        }
        if batch.count > 1 && !failure.unavailable {
            // One submission's bad data must not fail the strangers who shared its
            // transaction: each is tried alone, in order, before the queue moves on.
            precondition(alone.isEmpty, "only batches from the queue hold several submissions")
            writer = .attempting(batch: [batch[0]], retried: false, alone: batch.dropFirst())
            return .commit([batch[0]])
        }
        writer = .between(alone: alone)
        return .fail(batch)
    }

    /// The longest prefix of the queue within maxBatch events (at least one submission),
    /// taken in one move rather than one removeFirst (a shift of the rest) a submission.
    private mutating func takeBatch() -> [Submission] {
        var taken = 0
        var events = 0
        while taken < queue.count, taken == 0 || events + queue[taken].eventCount <= maxBatch {
            events += queue[taken].eventCount
            taken += 1
        }
        let batch = Array(queue[..<taken])
        queue.removeFirst(taken)
        queuedEvents -= events
        return batch
    }
}

extension GroupCommitPolicy.Action: Equatable where Submission: Equatable {}

extension GroupCommitPolicy.Failure {
    /// The failure `error` is to the policy; `projectorAsksAgain` is what the projector's
    /// `rolledBack` answered for this attempt.
    init(_ error: any Error, projectorAsksAgain: Bool) {
        self.init(worthRetrying: projectorAsksAgain || error is ProbeHintMiss || error is SkippedRoundTripRefused
                                 || error is HeadMoved,
                  unavailable: (error as? PostgresError)?.isUnavailable ?? false)
    }
}
