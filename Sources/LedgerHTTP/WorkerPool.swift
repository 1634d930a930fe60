import Foundation

/// A fixed set of dedicated threads draining a FIFO of jobs.
///
/// Handlers block (they wait for PostgreSQL commits), so they must run neither on
/// libmicrohttpd's polling threads nor on Swift's cooperative pool.
final class WorkerPool: @unchecked Sendable {
    // `condition` guards `queue`, `head`, `accepting` and `busy`.
    private let condition = NSCondition()
    private var queue: [(@Sendable () -> Void)?] = []
    private var head = 0
    private var accepting = true
    private var busy = 0

    init(threads: Int, name: String) {
        for index in 0..<max(1, threads) {
            let thread = Thread { [self] in self.run() }
            thread.name = "\(name)-\(index)"
            thread.start()
        }
    }

    /// Queues a job; false once the pool is shutting down.
    func submit(_ job: @escaping @Sendable () -> Void) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        guard accepting else { return false }
        queue.append(job)
        condition.signal()
        return true
    }

    /// Jobs queued or running.
    var pending: Int {
        condition.lock()
        defer { condition.unlock() }
        return queue.count - head + busy
    }

    /// Stops taking jobs; threads exit once the queue is drained. Does not wait for running jobs.
    func shutdown() {
        condition.lock()
        accepting = false
        condition.broadcast()
        condition.unlock()
    }

    private func run() {
        while true {
            condition.lock()
            while head == queue.count && accepting { condition.wait() }
            if head == queue.count {
                condition.unlock()
                return
            }
            let job = queue[head]
            queue[head] = nil
            head += 1
            if head > 1024, head * 2 > queue.count {
                queue.removeFirst(head)
                head = 0
            }
            busy += 1
            condition.unlock()
            job?()
            condition.lock()
            busy -= 1
            condition.unlock()
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
