import Dispatch
import Foundation
import Synchronization

/// What one operation of a load thread came to.
enum OperationOutcome {
    case ok
    case failed(String)
}

/// One load thread's operation. A worker is made on its own thread and used
/// only there, so it may hold non-Sendable state (a socket, buffers).
protocol LoadWorker: AnyObject {
    func perform(_ sequence: Int) -> OperationOutcome
    /// Called on the worker's thread after its last operation, before the run ends.
    func finish()
}

extension LoadWorker {
    func finish() {}
}

/// How long and how hard to load.
struct LoadPlan: Sendable {
    var threads: Int
    /// The measured window, after the warm-up.
    var seconds: Double
    /// Operations completing during the warm-up are not counted.
    var warmupSeconds: Double = 1
    /// Stop after this many operations started (over all threads), if set.
    var maxOperations: Int? = nil
}

/// The measured window's figures.
struct LoadResult: Sendable {
    /// Successful operations completed inside the measured window.
    var ok = 0
    /// Failed operations completed inside the measured window.
    var failed = 0
    /// Every operation, warm-up included.
    var totalOK = 0
    var totalFailed = 0
    var windowSeconds = 0.0
    /// Latency of the successful operations of the window.
    var latency = LatencySummary()
    /// A few failure messages with their counts.
    var failures: [String: Int] = [:]

    var rate: Double { windowSeconds > 0 ? Double(ok) / windowSeconds : 0 }
}

/// Runs `plan.threads` OS threads, each looping on its own `LoadWorker`
/// until the deadline or the operation cap, and merges what they measured.
/// Real threads (not tasks): workers block in libpq and in socket calls.
enum LoadRunner {
    private struct ThreadResult: Sendable {
        var latencies = LatencyRecorder()
        var ok = 0, failed = 0, totalOK = 0, totalFailed = 0
        var lastCompletion: UInt64 = 0
        var failures: [String: Int] = [:]
    }

    /// Shared by the threads of one run.
    private final class Shared: Sendable {
        let ready = DispatchGroup()
        let done = DispatchGroup()
        let gate = DispatchSemaphore(value: 0)
        let window = Mutex<(start: UInt64, deadline: UInt64)>((0, 0))
        let started = Atomic<Int>(0)
        let results = Mutex<[ThreadResult]>([])
    }

    static func run(_ plan: LoadPlan, makeWorker: @escaping @Sendable (Int) throws -> any LoadWorker) -> LoadResult {
        let shared = Shared()
        for index in 0..<plan.threads {
            shared.ready.enter()
            shared.done.enter()
            let thread = Thread { threadBody(index, plan, shared, makeWorker) }
            thread.stackSize = 1 << 20
            thread.name = "bench-\(index)"
            thread.start()
        }
        // Workers connect first; a slow or failed setup must not eat into the window.
        _ = shared.ready.wait(timeout: .now() + 30)
        let begin = MonotonicClock.now()
        let start = begin + UInt64(plan.warmupSeconds * 1e9)
        let deadline = start + UInt64(plan.seconds * 1e9)
        shared.window.withLock { $0 = (start, deadline) }
        for _ in 0..<plan.threads { shared.gate.signal() }
        // Each operation is bounded by its own timeouts; this is a last resort.
        if shared.done.wait(timeout: .now() + plan.warmupSeconds + plan.seconds + 60) == .timedOut {
            print("warning: some load threads did not finish in time")
        }
        let threads = shared.results.withLock { $0 }
        var result = LoadResult()
        var lastCompletion: UInt64 = 0
        for t in threads {
            result.ok += t.ok
            result.failed += t.failed
            result.totalOK += t.totalOK
            result.totalFailed += t.totalFailed
            lastCompletion = max(lastCompletion, t.lastCompletion)
            for (message, count) in t.failures { result.failures[message, default: 0] += count }
        }
        // Time-bounded: the window is warm-up end to deadline. Count-bounded
        // runs may end earlier, at the last completion.
        let end = min(deadline, max(start, lastCompletion))
        result.windowSeconds = MonotonicClock.seconds(end - start)
        result.latency = LatencyRecorder.summarize(threads.map(\.latencies))
        return result
    }

    private static func threadBody(_ index: Int, _ plan: LoadPlan, _ shared: Shared,
                                   _ makeWorker: @Sendable (Int) throws -> any LoadWorker) {
        var mine = ThreadResult()
        defer {
            shared.results.withLock { $0.append(mine) }
            shared.done.leave()
        }
        let worker: (any LoadWorker)?
        do { worker = try makeWorker(index) } catch {
            worker = nil
            mine.failures["setup: \(error)", default: 0] += 1
            mine.failed += 1
        }
        shared.ready.leave()
        shared.gate.wait()
        guard let worker else { return }
        let (start, deadline) = shared.window.withLock { $0 }
        var sequence = 0
        while true {
            let before = MonotonicClock.now()
            if before >= deadline { break }
            if let cap = plan.maxOperations, shared.started.add(1, ordering: .relaxed).newValue > cap { break }
            let outcome = worker.perform(sequence)
            sequence += 1
            let after = MonotonicClock.now()
            let counted = after >= start && after <= deadline
            mine.lastCompletion = after
            switch outcome {
            case .ok:
                mine.totalOK += 1
                if counted {
                    mine.ok += 1
                    mine.latencies.record(nanoseconds: after - before)
                }
            case .failed(let message):
                mine.totalFailed += 1
                if counted { mine.failed += 1 }
                if mine.failures.count < 8 || mine.failures[message] != nil { mine.failures[message, default: 0] += 1 }
            }
        }
        worker.finish()
    }
}
