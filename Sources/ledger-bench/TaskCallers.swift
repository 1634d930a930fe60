import Dispatch
import LedgerCore
import LedgerPostgres
import Synchronization

/// Issue 2's callers as Swift tasks: `callers` concurrent tasks, each appending
/// one new event at a time through the GroupCommitter's async API and awaiting
/// its commit. The same contract as the thread callers (one event a call,
/// answered after commit), without one OS thread per caller: a commit of 250
/// events resumes 250 continuations on the cooperative pool instead of waking
/// 250 threads, so the machine's two cores go to the ledger, not to the
/// scheduler.
enum TaskCallers {
    private struct TaskResult: Sendable {
        var latencies = LatencyRecorder()
        var ok = 0, failed = 0, totalOK = 0, totalFailed = 0
        var failures: [String: Int] = [:]
    }

    static func run(committer: GroupCommitter, run: String, callers: Int, seconds: Double,
                    warmupSeconds: Double = 1) -> LoadResult {
        let start = MonotonicClock.now() + UInt64(warmupSeconds * 1e9)
        let deadline = start + UInt64(seconds * 1e9)
        let done = DispatchSemaphore(value: 0)
        let results = Mutex<[TaskResult]>([])
        Task {
            await withTaskGroup(of: TaskResult.self) { group in
                for caller in 0..<callers {
                    group.addTask { await Self.caller(caller, committer: committer, run: run, start: start, deadline: deadline) }
                }
                for await result in group { results.withLock { $0.append(result) } }
            }
            done.signal()
        }
        done.wait()
        let all = results.withLock { $0 }
        var result = LoadResult()
        for r in all {
            result.ok += r.ok
            result.failed += r.failed
            result.totalOK += r.totalOK
            result.totalFailed += r.totalFailed
            for (message, count) in r.failures { result.failures[message, default: 0] += count }
        }
        result.windowSeconds = MonotonicClock.seconds(deadline - start)
        result.latency = LatencyRecorder.summarize(all.map(\.latencies))
        return result
    }

    private static func caller(_ index: Int, committer: GroupCommitter, run: String,
                               start: UInt64, deadline: UInt64) async -> TaskResult {
        var mine = TaskResult()
        var sequence = 0
        while true {
            let began = MonotonicClock.now()
            if began >= deadline { break }
            let event = EventSample.newEvent(run: run, thread: index, n: sequence)
            sequence += 1
            var failure: String?
            do {
                let outcomes = try await committer.append([event])
                if case .appended = outcomes.first {} else { failure = "not appended: \(String(describing: outcomes.first))" }
            } catch {
                failure = String(describing: error)
            }
            let ended = MonotonicClock.now()
            let counted = began >= start && ended <= deadline
            if let failure {
                mine.totalFailed += 1
                if counted { mine.failed += 1; mine.failures[failure, default: 0] += 1 }
            } else {
                mine.totalOK += 1
                if counted { mine.ok += 1; mine.latencies.record(nanoseconds: ended - began) }
            }
        }
        return mine
    }
}
