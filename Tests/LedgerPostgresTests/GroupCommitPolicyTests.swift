@testable import LedgerPostgres
import Testing

/// The group committer's decisions, without PostgreSQL or threads: batching limits,
/// back-pressure, one retry for a transient failure, a failed batch split to isolate
/// the bad submission, shutdown, and (by property over random event sequences) that
/// every submission is answered exactly once, after its commit, in order.
@Suite("Group commit policy")
struct GroupCommitPolicyTests {
    struct Submission: GroupCommitSubmission, Hashable, CustomStringConvertible {
        let id: Int
        var eventCount = 1
        /// The simulated database refuses any transaction that carries it.
        var bad = false
        var description: String { "#\(id)(\(eventCount))" }
    }
    typealias Policy = GroupCommitPolicy<Submission>

    static func submissions(_ counts: [Int]) -> [Submission] {
        counts.enumerated().map { Submission(id: $0.offset, eventCount: $0.element) }
    }

    /// A policy holding `queued`, each admitted.
    static func policy(maxBatch: Int = 4, maxQueuedEvents: Int = 100, queued: [Submission]) -> Policy {
        var policy = Policy(maxBatch: maxBatch, maxQueuedEvents: maxQueuedEvents)
        for s in queued { #expect(policy.submitted(s) == .wakeWriter) }
        return policy
    }

    @Test("with nothing queued the writer waits; a submission wakes it and is committed alone")
    func waitsThenCommits() {
        var policy = Policy(maxBatch: 4, maxQueuedEvents: 100)
        #expect(policy.writerReady() == .wait)
        let s = Submission(id: 1)
        #expect(policy.submitted(s) == .wakeWriter)
        #expect(policy.writerReady() == .commit([s]))
        #expect(policy.batchCommitted() == .succeed([s]))
        #expect(policy.writerReady() == .wait)
    }

    @Test("a batch is the longest run of queued submissions within maxBatch events, in order")
    func batchesWithinMaxBatch() {
        let s = Self.submissions([1, 2, 1, 3, 4, 1])
        var policy = Self.policy(maxBatch: 4, queued: s)
        #expect(policy.writerReady() == .commit([s[0], s[1], s[2]]))   // 4 events; the next (3) would pass it
        #expect(policy.batchCommitted() == .succeed([s[0], s[1], s[2]]))
        #expect(policy.writerReady() == .commit([s[3]]))              // 3, and 3 + 4 > 4
        #expect(policy.batchCommitted() == .succeed([s[3]]))
        #expect(policy.writerReady() == .commit([s[4]]))              // exactly 4
        #expect(policy.batchCommitted() == .succeed([s[4]]))
        #expect(policy.writerReady() == .commit([s[5]]))
    }

    @Test("a submission larger than maxBatch is taken alone, not refused")
    func oversizedSubmissionAlone() {
        let s = Self.submissions([9, 1])
        var policy = Self.policy(maxBatch: 4, queued: s)
        #expect(policy.writerReady() == .commit([s[0]]))
        #expect(policy.batchCommitted() == .succeed([s[0]]))
        #expect(policy.writerReady() == .commit([s[1]]))
    }

    @Test("past maxQueuedEvents waiting a submission is refused, saying how many wait; an empty queue takes any size")
    func backPressure() {
        var policy = Policy(maxBatch: 10, maxQueuedEvents: 3)
        #expect(policy.submitted(Submission(id: 0, eventCount: 5)) == .wakeWriter)   // the queue was empty
        #expect(policy.submitted(Submission(id: 1)) == .refuse(.writerBehind(waitingEvents: 5)))
        _ = policy.writerReady()                                                    // the writer takes the 5
        #expect(policy.submitted(Submission(id: 2, eventCount: 2)) == .wakeWriter)
        #expect(policy.submitted(Submission(id: 3)) == .wakeWriter)                 // 3 waiting: at the limit
        #expect(policy.submitted(Submission(id: 4)) == .refuse(.writerBehind(waitingEvents: 3)))
    }

    @Test("a transient failure is retried once with the same batch; a second one splits it")
    func transientRetriedOnce() {
        let s = Self.submissions([1, 1])
        var policy = Self.policy(queued: s)
        #expect(policy.writerReady() == .commit(s))
        #expect(policy.batchFailed(.transient) == .retry(s))
        #expect(policy.batchFailed(.transient) == .commit([s[0]]))
        #expect(policy.batchFailed(.transient) == .retry([s[0]]))
        #expect(policy.batchCommitted() == .succeed([s[0]]))
        #expect(policy.writerReady() == .commit([s[1]]))
    }

    @Test("a retried batch that commits is answered once, in full")
    func retryThenCommit() {
        let s = Self.submissions([1, 2])
        var policy = Self.policy(queued: s)
        #expect(policy.writerReady() == .commit(s))
        #expect(policy.batchFailed(.transient) == .retry(s))
        #expect(policy.batchCommitted() == .succeed(s))
        #expect(policy.writerReady() == .wait)
    }

    @Test("a refused batch is split: each submission is tried alone, the bad one fails alone, the others commit")
    func splitIsolatesTheBadSubmission() {
        let s = Self.submissions([1, 1, 1])
        var policy = Self.policy(queued: s)
        #expect(policy.writerReady() == .commit(s))
        #expect(policy.batchFailed(.refused) == .commit([s[0]]))
        #expect(policy.batchCommitted() == .succeed([s[0]]))
        #expect(policy.writerReady() == .commit([s[1]]))
        #expect(policy.batchFailed(.refused) == .fail([s[1]]))
        #expect(policy.writerReady() == .commit([s[2]]))
        #expect(policy.batchCommitted() == .succeed([s[2]]))
        #expect(policy.writerReady() == .wait)
    }

    @Test("what is submitted while a split batch is tried waits until each of its submissions is answered")
    func splitBeforeTheQueue() {
        let s = Self.submissions([1, 1])
        var policy = Self.policy(queued: s)
        #expect(policy.writerReady() == .commit(s))
        let later = Submission(id: 9)
        #expect(policy.submitted(later) == .wakeWriter)
        #expect(policy.batchFailed(.refused) == .commit([s[0]]))
        #expect(policy.batchFailed(.refused) == .fail([s[0]]))
        #expect(policy.writerReady() == .commit([s[1]]))
        #expect(policy.batchCommitted() == .succeed([s[1]]))
        #expect(policy.writerReady() == .commit([later]))
    }

    @Test("while the database is unavailable a batch fails whole: trying each submission alone would fail the same")
    func unavailableNotSplit() {
        let s = Self.submissions([1, 1, 1])
        var policy = Self.policy(queued: s)
        #expect(policy.writerReady() == .commit(s))
        #expect(policy.batchFailed(.unavailable) == .fail(s))
        // Worth retrying and unavailable: the one retry, then failed whole.
        let t = Self.submissions([1, 1])
        var other = Self.policy(queued: t)
        #expect(other.writerReady() == .commit(t))
        let both = Policy.Failure(worthRetrying: true, unavailable: true)
        #expect(other.batchFailed(both) == .retry(t))
        #expect(other.batchFailed(both) == .fail(t))
    }

    @Test("a lone submission refused is answered with the failure, after its one retry if worth one")
    func loneSubmissionFails() {
        let s = Submission(id: 0)
        var policy = Self.policy(queued: [s])
        #expect(policy.writerReady() == .commit([s]))
        #expect(policy.batchFailed(.refused) == .fail([s]))
        #expect(policy.submitted(s) == .wakeWriter)
        #expect(policy.writerReady() == .commit([s]))
        #expect(policy.batchFailed(.transient) == .retry([s]))
        #expect(policy.batchFailed(.refused) == .fail([s]))
    }

    @Test("shutdown refuses new submissions, commits what is queued, then stops")
    func shutdownDrains() {
        let s = Self.submissions([1, 1])
        var policy = Self.policy(maxBatch: 1, queued: s)
        #expect(policy.shutdownRequested() == .waitForWriter)
        #expect(policy.isShuttingDown)
        #expect(policy.submitted(Submission(id: 7)) == .refuse(.shuttingDown))
        #expect(policy.writerReady() == .commit([s[0]]))
        #expect(policy.batchCommitted() == .succeed([s[0]]))
        #expect(!policy.writerStopped)
        #expect(policy.writerReady() == .commit([s[1]]))
        #expect(policy.batchCommitted() == .succeed([s[1]]))
        #expect(policy.writerReady() == .stop)
        #expect(policy.writerStopped)
        #expect(policy.shutdownRequested() == .stopped)
        #expect(policy.writerReady() == .stop)
    }

    @Test("errors map to failures: the writer's wrong guesses and a projector's request are worth a retry, an outage is unavailable")
    func failureOfErrors() {
        struct Other: Error {}
        let unique = PostgresError.server(sqlState: "23505", message: "duplicate key", detail: nil)
        #expect(Policy.Failure(ProbeHintMiss(cause: unique), projectorAsksAgain: false) == .transient)
        #expect(Policy.Failure(HeadMoved(cause: unique), projectorAsksAgain: false) == .transient)
        #expect(Policy.Failure(SkippedRoundTripRefused(recordedMicros: 1, postgresMicros: 2), projectorAsksAgain: false)
                == .transient)
        #expect(Policy.Failure(Other(), projectorAsksAgain: true) == .transient)
        #expect(Policy.Failure(Other(), projectorAsksAgain: false) == .refused)
        #expect(Policy.Failure(unique, projectorAsksAgain: false) == .refused)
        #expect(Policy.Failure(PostgresError.connectionLost("gone"), projectorAsksAgain: false) == .unavailable)
    }
}
