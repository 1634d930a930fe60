@testable import LedgerPostgres
import Testing

/// The group commit policy driven by thousands of seeded random event sequences
/// (submissions, commits, failures of every kind, shutdown at any point), as its
/// shell would drive it, against a simulated database. Whatever happens: every
/// admitted submission is answered exactly once, never before the transaction that
/// carried it committed or failed for good, in the order of admission; batches keep
/// to their limits and to queue order; nothing is committed twice.
@Suite("Group commit policy, by property")
struct GroupCommitPolicyPropertyTests {
    typealias Submission = GroupCommitPolicyTests.Submission
    typealias Policy = GroupCommitPolicy<Submission>

    /// How the simulated database treats a transaction.
    enum Weather {
        /// Only a transaction carrying a bad submission fails (refused, sometimes with
        /// the projector asking for one more attempt).
        case calm
        /// Any transaction may also fail for no fault of its submissions: transient,
        /// unavailable, refused.
        case stormy
    }

    /// One random sequence: the policy, the shell's state, and what was seen.
    struct Run {
        let weather: Weather
        var rng: JSONBTextTests.SplitMix
        var policy: Policy
        var nextID = 0
        var shutdownAsked = false

        /// What the writer holds: nothing (it asks `writerReady`), an attempt under way, an answer to deliver.
        enum Writer { case idle, attempting([Submission], retry: Bool), answering(Policy.Action), stopped }
        var writer = Writer.idle

        /// Admitted and not yet taken into a batch, in admission order, and their events.
        var queued: [Submission] = []
        var queuedEvents = 0
        /// What is left of a split batch, to be tried one by one before the queue.
        var alone: ArraySlice<Submission> = []
        var admitted: [Int] = []
        var refused: Set<Int> = []
        /// Answers in delivery order: the submission, and whether it was committed.
        var answers: [(id: Int, committed: Bool)] = []
        var bad: Set<Int> = []
        var committed: Set<Int> = []
        /// The last attempt's batch and how it ended (nil: committed).
        var lastAttempt: (batch: [Submission], retry: Bool, failure: Policy.Failure?)?

        init(seed: UInt64, weather: Weather) {
            self.weather = weather
            rng = JSONBTextTests.SplitMix(seed: seed)
            policy = Policy(maxBatch: Int.random(in: 1...8, using: &rng), maxQueuedEvents: Int.random(in: 1...24, using: &rng))
        }

        mutating func chance(_ p: Double) -> Bool { Double.random(in: 0..<1, using: &rng) < p }

        mutating func submit() {
            let s = Submission(id: nextID, eventCount: Int.random(in: 1...5, using: &rng), bad: chance(0.08))
            nextID += 1
            let waiting = queuedEvents
            switch policy.submitted(s) {
            case .wakeWriter:
                #expect(!shutdownAsked, "admitted after shutdown")
                #expect(waiting == 0 || waiting + s.eventCount <= policy.maxQueuedEvents, "admitted past the limit")
                queued.append(s)
                queuedEvents += s.eventCount
                admitted.append(s.id)
                if s.bad { bad.insert(s.id) }
            case .refuse(.shuttingDown):
                #expect(shutdownAsked, "refused as shutting down before shutdown")
                refused.insert(s.id)
            case .refuse(.writerBehind(let n)):
                #expect(!shutdownAsked)
                #expect(n == waiting && n > 0 && n + s.eventCount > policy.maxQueuedEvents, "refused within the limit")
                refused.insert(s.id)
            }
        }

        mutating func shutdown() {
            shutdownAsked = true
            let answer = policy.shutdownRequested()
            if case .stopped = writer { #expect(answer == .stopped) } else { #expect(answer == .waitForWriter) }
        }

        /// The simulated database's verdict on one transaction.
        mutating func transaction(_ batch: [Submission]) -> Policy.Failure? {
            if batch.contains(where: \.bad) {
                return Policy.Failure(worthRetrying: chance(0.3), unavailable: false)
            }
            guard weather == .stormy else { return nil }
            switch Int.random(in: 0..<20, using: &rng) {
            case 0, 1: return .transient
            case 2: return .unavailable
            case 3: return .refused
            case 4: return Policy.Failure(worthRetrying: true, unavailable: true)
            default: return nil
            }
        }

        /// One step of the writer, as `GroupCommitter.writerLoop` takes it.
        mutating func stepWriter() {
            switch writer {
            case .idle:
                let action = policy.writerReady()
                switch action {
                case .wait:
                    #expect(queued.isEmpty && alone.isEmpty && !shutdownAsked, "waited with work to do")
                case .commit(let batch):
                    checkTaken(batch)
                    writer = .attempting(batch, retry: false)
                case .stop:
                    #expect(queued.isEmpty && alone.isEmpty && shutdownAsked, "stopped with work to do")
                    #expect(policy.writerStopped)
                    writer = .stopped
                default:
                    Issue.record("writerReady answered \(action)")
                }
            case .attempting(let batch, let retry):
                #expect(!batch.contains { committed.contains($0.id) }, "a committed submission attempted again")
                let failure = transaction(batch)
                lastAttempt = (batch, retry, failure)
                if failure == nil { for s in batch { committed.insert(s.id) } }
                if let failure { checkAfterAttempt(policy.batchFailed(failure)) } else { checkAfterAttempt(policy.batchCommitted()) }
            case .answering(let action):
                switch action {
                case .succeed(let batch): answers += batch.map { ($0.id, true) }
                case .fail(let batch): answers += batch.map { ($0.id, false) }
                default: Issue.record("answering \(action)")
                }
                writer = .idle
            case .stopped:
                #expect(policy.writerReady() == .stop)
            }
        }

        /// A batch handed out by `writerReady`: the next alone of a split batch, or the
        /// longest run at the head of the queue within maxBatch events.
        mutating func checkTaken(_ batch: [Submission]) {
            if let next = alone.first {
                #expect(batch == [next], "a split batch's next submission is tried alone before the queue")
                alone = alone.dropFirst()
                return
            }
            let events = batch.reduce(0) { $0 + $1.eventCount }
            #expect(!batch.isEmpty && Array(queued.prefix(batch.count)) == batch, "not the head of the queue, in order")
            #expect(events <= policy.maxBatch || batch.count == 1, "past maxBatch")
            if batch.count < queued.count {
                #expect(events + queued[batch.count].eventCount > policy.maxBatch, "the batch could have taken more")
            }
            queued.removeFirst(min(batch.count, queued.count))
            queuedEvents -= events
        }

        mutating func checkAfterAttempt(_ action: Policy.Action) {
            guard let last = lastAttempt else { return }
            let (batch, retry, failure) = last
            switch action {
            case .succeed(let answered):
                #expect(failure == nil && answered == batch, "answered a success that was not the commit")
                writer = .answering(action)
            case .fail(let answered):
                #expect(failure != nil && answered == batch, "answered a failure that was not the attempt's")
                #expect(retry || failure?.worthRetrying != true, "failed without the retry it was worth")
                #expect(batch.count == 1 || failure?.unavailable == true, "failed a batch whole that could be split")
                writer = .answering(action)
            case .retry(let again):
                #expect(failure?.worthRetrying == true && !retry && again == batch, "retried what was not worth it")
                writer = .attempting(again, retry: true)
            case .commit(let first):
                #expect(failure != nil && failure?.unavailable != true && batch.count > 1, "split what should not be")
                #expect(retry || failure?.worthRetrying != true, "split without the retry it was worth")
                #expect(first == [batch[0]], "a split batch starts with its first submission")
                alone = batch.dropFirst()
                writer = .attempting(first, retry: false)
            default:
                Issue.record("after an attempt: \(action)")
            }
        }

        /// Random steps, then shutdown and the writer run to its end; then the invariants over the whole run.
        mutating func run(steps: Int) {
            for _ in 0..<steps {
                if !shutdownAsked && chance(0.005) { shutdown() }
                if chance(0.4) { submit() } else { stepWriter() }
            }
            if !shutdownAsked { shutdown() }
            var remaining = 10 * (nextID + 10)
            while remaining > 0 {
                if case .stopped = writer { break }
                if chance(0.05) { submit() }   // refused: shutting down
                stepWriter()
                remaining -= 1
            }
            guard case .stopped = writer else {
                Issue.record("the writer did not stop after shutdown")
                return
            }
            checkAnswers()
        }

        func checkAnswers() {
            let ids = answers.map(\.id)
            #expect(ids == admitted, "answers are not each admitted submission once, in admission order")
            #expect(refused.isDisjoint(with: ids), "a refused submission was answered")
            for answer in answers where answer.committed {
                #expect(committed.contains(answer.id) && !bad.contains(answer.id), "answered committed without a commit")
            }
            for answer in answers where !answer.committed {
                #expect(!committed.contains(answer.id), "a committed submission answered with a failure")
            }
            if weather == .calm {
                // Only bad submissions fail, and each fails alone.
                #expect(answers.allSatisfy { $0.committed == !bad.contains($0.id) }, "calm: a good submission failed")
            }
        }
    }

    @Test("2,000 random sequences with every kind of failure: each submission answered once, after its commit, in order")
    func stormySequences() {
        for seed in 1...2_000 {
            var run = Run(seed: UInt64(seed), weather: .stormy)
            run.run(steps: Int.random(in: 1...150, using: &run.rng))
        }
    }

    @Test("2,000 random sequences where only bad submissions fail: exactly the bad ones fail, each alone")
    func calmSequences() {
        for seed in 1...2_000 {
            var run = Run(seed: UInt64(seed) &* 7919, weather: .calm)
            run.run(steps: Int.random(in: 1...150, using: &run.rng))
        }
    }
}
