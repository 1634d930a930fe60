import LedgerObservability
import Foundation

/// A fixed set of dedicated threads running jobs in FIFO order.
///
/// Handlers block (they wait for PostgreSQL commits), so they must run neither on
/// libmicrohttpd's polling threads nor on Swift's cooperative pool. A job is handed straight
/// to an idle thread (the most recently idle one, whose stack is still warm) through that
/// thread's own semaphore; only when every thread is busy does it wait in the queue. This
/// keeps the shared lock to a few instructions instead of a herd of threads on one condition.
final class WorkerPool: @unchecked Sendable {
    typealias Job = @Sendable () -> Void

    /// One thread's parking spot. `job` is written by the submitter before `wake` is signalled.
    private final class Worker: @unchecked Sendable {
        let wake = DispatchSemaphore(value: 0)
        var job: Job?
    }

    // `lock` guards `queue`, `head`, `idle`, `accepting` and `busy`.
    private let lock = NSLock()
    private var queue: [Job?] = []
    private var head = 0
    private var idle: [Worker] = []
    private var accepting = true
    private var busy = 0

    init(threads: Int, name: String) {
        busy = max(1, threads)  // each thread counts as busy until it first parks
        for index in 0..<max(1, threads) {
            let worker = Worker()
            let thread = Thread { [self] in self.run(worker) }
            thread.name = "\(name)-\(index)"
            thread.start()
        }
    }

    /// Queues a job; false once the pool is shutting down.
    func submit(_ job: @escaping Job) -> Bool {
        lock.lock()
        guard accepting else {
            lock.unlock()
            return false
        }
        if let worker = idle.popLast() {
            busy += 1
            lock.unlock()
            worker.job = job
            worker.wake.signal()
        } else {
            queue.append(job)
            lock.unlock()
        }
        return true
    }

    /// Jobs queued or running.
    var pending: Int {
        lock.lock()
        defer { lock.unlock() }
        return queue.count - head + busy
    }

    /// Stops taking jobs; threads exit once the queue is drained. Does not wait for running jobs.
    func shutdown() {
        lock.lock()
        accepting = false
        let sleepers = idle
        idle.removeAll()
        lock.unlock()
        for worker in sleepers {
            worker.job = nil
            worker.wake.signal()
        }
    }

    private func run(_ worker: Worker) {
        var next: Job?
        while true {
            if let job = next {
                job()
                next = nil
            }
            lock.lock()
            if head < queue.count {
                next = queue[head]
                queue[head] = nil
                head += 1
                if head == queue.count {
                    queue.removeAll(keepingCapacity: true)
                    head = 0
                } else if head > 1024 {
                    queue.removeFirst(head)
                    head = 0
                }
                lock.unlock()
                continue
            }
            if !accepting {
                lock.unlock()
                return
            }
            busy -= 1
            idle.append(worker)
            lock.unlock()
            worker.wake.wait()
            guard let job = worker.job else { return }
            worker.job = nil
            next = job
        }
    }
}

/// Counts requests between their first byte of headers and their completion, so `stop()` can wait.
final class InFlightCounter: @unchecked Sendable {
    private let condition = NSCondition()
    private var count = 0

    func begin() {
        condition.lock()
        count += 1
        condition.unlock()
    }

    func end() {
        condition.lock()
        count -= 1
        if count <= 0 { condition.broadcast() }
        condition.unlock()
    }

    var value: Int {
        condition.lock()
        defer { condition.unlock() }
        return count
    }

    /// Waits until no request is in flight or `seconds` pass; true when drained.
    @discardableResult
    func waitUntilIdle(seconds: Double) -> Bool {
        let deadline = Date(timeIntervalSinceNow: max(0, seconds))
        condition.lock()
        defer { condition.unlock() }
        while count > 0 {
            if !condition.wait(until: deadline) { return count <= 0 }
        }
        return true
    }
}
