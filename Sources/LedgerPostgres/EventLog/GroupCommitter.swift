import Dispatch
import Foundation
import Synchronization

/// Work done inside the append transaction, after the batch's events are
/// appended: keeping read models in the same commit as their events makes a
/// write visible to the very next read.
public protocol BatchProjector: Sendable {
    /// `prepared.event` is the event as submitted.
    typealias Item = (prepared: PreparedEvent, attachment: (any Sendable)?, outcome: AppendOutcome)

    /// Work that needs no database, done while PostgreSQL stores the batch's events
    /// (so it costs the single writer no time); its result goes to `project`. Called
    /// at most once a batch, and not at all when the batch stores nothing new.
    func prepare(_ appended: [Item]) throws -> (any Sendable)?

    /// `attachment` is whatever the submitter attached to the event (for
    /// example its parsed form, so the projector need not parse it again);
    /// `prepared` is what `prepare` returned for these items, if it ran.
    func project(_ appended: [Item], prepared: (any Sendable)?, on connection: PostgresConnection) throws

    /// The transaction of the last `project` committed (what it kept may now be trusted).
    func committed()
    /// The transaction of the last `project` rolled back, or its outcome is unknown, on
    /// `error`. Answers true when the projector changed how it writes because of it, so
    /// the same batch is worth one more attempt before it is split or failed.
    func rolledBack(_ error: any Error) -> Bool
}

extension BatchProjector {
    public func prepare(_ appended: [Item]) throws -> (any Sendable)? { nil }
    public func committed() {}
    public func rolledBack(_ error: any Error) -> Bool { false }
}

/// Group commit: concurrent appends from many callers share one transaction,
/// and every caller gets its answer only after that transaction committed.
///
/// One writer thread takes everything queued (up to `maxBatch` events), appends
/// it in one transaction, commits, and answers. While it waits for the commit,
/// new requests queue up and form the next batch, so the batch size grows with
/// the load and each fsync is shared.
///
/// What to batch, retry, split and answer is decided by `GroupCommitPolicy`; this
/// class is its shell: the queue's lock, the writer thread, the transactions and
/// the answering queue carry out the actions the policy returns.
public final class GroupCommitter: @unchecked Sendable {
    // @unchecked: the policy is guarded by its condition (`Guarded`); the writer
    // thread alone touches the database connection it borrows.
    public typealias Completion = @Sendable (Result<[AppendOutcome], Error>) -> Void

    private struct Request: Sendable, GroupCommitSubmission {
        /// The events, prepared by the submitting thread, not the writer.
        let prepared: [PreparedEvent]
        let attachments: [(any Sendable)?]
        let completion: Completion
        var eventCount: Int { prepared.count }
    }
    private typealias Policy = GroupCommitPolicy<Request>

    private let pool: ConnectionPool
    private let store = EventStore()
    /// Stream versions as of the writer's last commit (writer thread only).
    private let streamVersions = StreamVersionCache()
    /// The keys and streams the writer has sent, to skip most probes (writer thread only).
    private let probeHints: ProbeHints
    private let projector: BatchProjector?
    /// The queue and the writer's progress, and the condition that guards them.
    private let guarded: Guarded
    /// Answers go out from here, in commit order, so the writer starts on the
    /// next batch at once instead of first waking every caller of this one.
    private let answers = DispatchQueue(label: "ledger.group-commit.answers")
    // Guarded by a lock, not a `Mutex`: with Swift 6.3 on Linux, release
    // builds of this class with a Mutex beside the answering DispatchQueue
    // corrupted the heap when the committer was released (a double free in
    // its deinit; clean under AddressSanitizer and in debug builds).
    private let statisticsLock = NSLock()
    private var statistics = Statistics()

    /// Counters for metrics.
    public struct Statistics: Sendable {
        public var batches: Int64 = 0
        public var appended: Int64 = 0
        public var duplicates: Int64 = 0
        public var failedBatches: Int64 = 0
        /// Batches tried a second time in full because the projector asked (`rolledBack`),
        /// because a key or stream taken for new existed (`probeHintMisses`), or because
        /// another writer had moved the head (`HeadMoved`).
        public var retriedBatches: Int64 = 0
        /// Batches whose key or stream, taken for new without a probe, did exist (`ProbeHints`).
        public var probeHintMisses: Int64 = 0
        /// Committed batches that skipped ledger.append_prepare's round trip (`ChainAppend`).
        public var roundTripsSkipped: Int64 = 0
        /// The probe hints' seed has been read from the store (always false without one);
        /// the writer merges it before its next batch.
        public var hintsSeeded = false
        /// Writer time, in nanoseconds, of committed batches: BEGIN and the append,
        /// the projector, and COMMIT (with its fsync). Their sum against the wall
        /// clock tells how busy the single writer is.
        public var appendNanos: UInt64 = 0
        public var projectNanos: UInt64 = 0
        public var commitNanos: UInt64 = 0
        public init() {}
    }

    /// - Parameters:
    ///   - seedHints: when given, the writer probes every key and stream until
    ///     this has been read from the store on another thread (`ProbeHints`): what a
    ///     service restarted on an existing ledger wants. Without it the hints start empty.
    ///   - onHintSeedError: told when reading the seed failed (it is retried every second).
    ///   - writerNice: the nice value the writer thread asks for (`WriterPriority`); 0 leaves it alone.
    public init(pool: ConnectionPool, projector: BatchProjector? = nil, maxBatch: Int = 1000,
                maxQueuedEvents: Int = 50_000, seedHints: ProbeHintSeed? = nil,
                onHintSeedError: (@Sendable (Error) -> Void)? = nil, writerNice: Int32 = 0) {
        self.pool = pool
        self.projector = projector
        // Beyond maxQueuedEvents waiting, new submissions are refused at once (503 upstream).
        guarded = Guarded(Policy(maxBatch: maxBatch, maxQueuedEvents: maxQueuedEvents))
        probeHints = ProbeHints(awaitingSeed: seedHints != nil)
        let thread = Thread { [self] in
            Thread.current.name = "ledger-writer"   // named from inside: Linux names the running thread only
            self.priorityHandoff.deliver(WriterPriority.apply(writerNice))
            self.writerLoop()
        }
        thread.start()
        if let seedHints {
            let seeder = Thread { [self] in
                Thread.current.name = "ledger-hint-seed"
                self.seed(seedHints, onError: onHintSeedError)
            }
            seeder.start()
        }
    }

    /// Reads the seed until it succeeds (the database may not be up yet) or the committer
    /// stops; reports the first failure and then every 60th (one a minute) to `onError`.
    private func seed(_ seed: ProbeHintSeed, onError: (@Sendable (Error) -> Void)?) {
        var failures = 0
        let stopRequested = { [self] in guarded.condition.withLock { guarded.policy.isShuttingDown } }
        while !stopRequested() {
            do {
                var filters = probeHints.emptySeed()
                let finished = try pool.withConnection {
                    try seed.read(on: $0, shouldStop: stopRequested,
                                  key: { filters.insert(key: $0) }, stream: { filters.insert(stream: $0) })
                }
                guard finished else { return }
                probeHints.absorb(filters)
                statisticsLock.withLock { statistics.hintsSeeded = true }
                return
            } catch {
                if failures % 60 == 0 { onError?(error) }
                failures += 1
                Thread.sleep(forTimeInterval: 1)
            }
        }
    }

    public var stats: Statistics { statisticsLock.withLock { statistics } }

    /// The writer thread's priority as it set it at start (nil if it did not report within 2 s).
    public var writerPriority: WriterPriority? { priorityHandoff.wait(seconds: 2) }
    private let priorityHandoff = WriterPriorityHandoff()

    /// Queues `events`; `completion` runs after commit, on the committer's
    /// answering queue (serial, in commit order): keep it short.
    public func submit(_ events: [NewEvent], attachments: [(any Sendable)?]? = nil, completion: @escaping Completion) {
        let request = Request(prepared: events.map(PreparedEvent.init),
                              attachments: attachments ?? Array(repeating: nil, count: events.count), completion: completion)
        guarded.condition.lock()
        let action = guarded.policy.submitted(request)
        if case .wakeWriter = action { guarded.condition.signal() }
        guarded.condition.unlock()
        switch action {
        case .wakeWriter:
            break
        case .refuse(.shuttingDown):
            completion(.failure(PostgresError.connectionFailed("the ledger is shutting down")))
        case .refuse(.writerBehind(let waiting)):
            completion(.failure(PostgresError.connectionFailed("the writer is behind: \(waiting) events wait for a commit")))
        }
    }

    /// Appends and blocks until committed, or throws. `timeout` bounds the wait:
    /// past it the caller gets an error (and may retry; idempotency keys make
    /// a retry safe even if the first attempt did commit).
    public func append(_ events: [NewEvent], attachments: [(any Sendable)?]? = nil, timeout: Double = 10) throws -> [AppendOutcome] {
        let answer = Answer()
        submit(events, attachments: attachments) { answer.deliver($0) }
        guard let result = answer.wait(seconds: timeout) else {
            throw PostgresError.connectionLost("no commit within \(timeout) s")
        }
        return try result.get()
    }

    /// One caller's answer, handed from the answering queue to a waiting thread.
    /// @unchecked Sendable: `result` is written once, before `done` is signalled,
    /// and read only after the wait for that signal (or under `lock`).
    private final class Answer: @unchecked Sendable {
        private let done = DispatchSemaphore(value: 0)
        private let lock = NSLock()
        private var result: Result<[AppendOutcome], Error>?

        func deliver(_ value: Result<[AppendOutcome], Error>) {
            lock.withLock { result = value }
            done.signal()
        }

        func wait(seconds: Double) -> Result<[AppendOutcome], Error>? {
            if done.wait(timeout: .now() + seconds) == .timedOut { return nil }
            return lock.withLock { result }
        }
    }

    public func append(_ events: [NewEvent]) async throws -> [AppendOutcome] {
        try await withCheckedThrowingContinuation { continuation in
            submit(events) { continuation.resume(with: $0) }
        }
    }

    /// Stops taking requests, commits what is queued, and returns when done.
    public func shutdown() {
        guarded.condition.lock()
        if case .waitForWriter = guarded.policy.shutdownRequested() {
            guarded.condition.broadcast()
            while !guarded.policy.writerStopped { guarded.condition.wait() }
        }
        guarded.condition.unlock()
        answers.sync {}   // every answer delivered before this returns
    }

    /// Carries out the policy's actions until it says stop.
    private func writerLoop() {
        while true {
            let action = nextAction()
            if case .stop = action { return }
            attemptAndAnswer(action)
        }
    }

    /// Carries out `first` (a `.commit`) and what the policy says after each attempt (its
    /// retry, or a split batch's first submission alone), up to the answer that ends them.
    private func attemptAndAnswer(_ first: Policy.Action) {
        var action = first
        while true {
            let batch: [Request], isRetry: Bool
            switch action {
            case .commit(let attempted):
                (batch, isRetry) = (attempted, false)
            case .retry(let attempted):
                (batch, isRetry) = (attempted, true)
                statisticsLock.withLock { statistics.retriedBatches += 1 }
            default:
                preconditionFailure("the policy answered \(action) where an attempt was due")
            }
            switch attempt(batch) {
            case .committed(let outcomes, let timing):
                record(outcomes, timing)
                action = guarded.condition.withLock { guarded.policy.batchCommitted() }
                guard case .succeed(let answered) = action else { preconditionFailure("a commit answered \(action)") }
                answers.async {
                    var offset = 0
                    for request in answered {
                        let slice = Array(outcomes[offset..<(offset + request.prepared.count)])
                        offset += request.prepared.count
                        request.completion(.success(slice))
                    }
                }
                return
            case .failed(let error, let failure):
                // Batches that missed, not attempts: a retry that misses again is not counted twice.
                if !isRetry && error is ProbeHintMiss { statisticsLock.withLock { statistics.probeHintMisses += 1 } }
                action = guarded.condition.withLock { guarded.policy.batchFailed(failure) }
                switch action {
                case .retry:
                    continue
                case .commit:   // split: its submissions are tried alone, this the first
                    statisticsLock.withLock { statistics.failedBatches += 1 }
                    continue
                case .fail(let answered):
                    statisticsLock.withLock { statistics.failedBatches += 1 }
                    answers.async { for request in answered { request.completion(.failure(error)) } }
                    return
                default:
                    preconditionFailure("a failure answered \(action)")
                }
            }
        }
    }

    /// The policy's next action once the writer has nothing in hand, waiting for
    /// submissions while there are none.
    private func nextAction() -> Policy.Action {
        guarded.condition.lock()
        defer { guarded.condition.unlock() }
        var action = guarded.policy.writerReady()
        while case .wait = action {
            guarded.condition.wait()
            action = guarded.policy.writerReady()
        }
        if case .stop = action { guarded.condition.broadcast() }   // `shutdown` waits for this
        return action
    }

    private func record(_ outcomes: [AppendOutcome], _ timing: PhaseTiming) {
        statisticsLock.withLock {
            statistics.batches += 1
            statistics.appendNanos += timing.append
            statistics.projectNanos += timing.project
            statistics.commitNanos += timing.commit
            for o in outcomes {
                if case .appended = o { statistics.appended += 1 } else if o.isDuplicate { statistics.duplicates += 1 }
            }
        }
    }

    private enum Attempt {
        case committed([AppendOutcome], PhaseTiming)
        case failed(Error, Policy.Failure)
    }

    /// Appends and projects `batch` in one transaction, committed or rolled back; on a
    /// rollback, also how the policy is to take the failure.
    private func attempt(_ batch: [Request]) -> Attempt {
        let events = batch.flatMap(\.prepared)
        let start = DispatchTime.now().uptimeNanoseconds
        var appended = start, projected = start
        do {
            let attachments = batch.flatMap(\.attachments)
            func items(_ outcomes: [AppendOutcome]) -> [BatchProjector.Item] {
                events.indices.map { (events[$0], attachments[$0], outcomes[$0]) }
            }
            let outcomes = try pool.transaction { connection in
                var prepared: (any Sendable)?
                let outcomes = try store.append(
                    prepared: events, on: connection, cache: streamVersions, hints: probeHints,
                    whileStoring: projector.map { projector in { outcomes in prepared = try projector.prepare(items(outcomes)) } })
                appended = DispatchTime.now().uptimeNanoseconds
                if let projector {
                    try projector.project(items(outcomes), prepared: prepared, on: connection)
                }
                projected = DispatchTime.now().uptimeNanoseconds
                return outcomes
            }
            streamVersions.commit()
            if streamVersions.lastCommitSkippedRoundTrip { statisticsLock.withLock { statistics.roundTripsSkipped += 1 } }
            projector?.committed()
            let end = DispatchTime.now().uptimeNanoseconds
            return .committed(outcomes, PhaseTiming(append: appended - start, project: projected - appended, commit: end - projected))
        } catch {
            streamVersions.invalidate()   // rolled back, or its outcome unknown
            let projectorAsks = projector?.rolledBack(error) ?? false
            return .failed(error, Policy.Failure(error, projectorAsksAgain: projectorAsks))
        }
    }

    /// The policy and the condition that guards it, in an object of their own rather than
    /// as two stored properties of the committer. With them inline the committer is 288
    /// bytes, and release builds (Swift 6.3 on Linux, jemalloc) then crashed now and then
    /// as the writer thread started, reading one of the committer's fields as zero. The
    /// committer without the policy, padded to the same 288 bytes, crashed the same way,
    /// so the cause lies outside this file and is not understood; at 240 bytes, and as it
    /// is with this object, it was not seen to.
    private final class Guarded: @unchecked Sendable {
        // @unchecked: `policy` is read and written only while `condition` is locked.
        let condition = NSCondition()
        var policy: Policy
        init(_ policy: Policy) { self.policy = policy }
    }

    private struct PhaseTiming {
        var append: UInt64 = 0
        var project: UInt64 = 0
        var commit: UInt64 = 0
    }
}
