import Foundation

/// Batches handed from one thread to another through a bounded queue: the producer
/// waits while `capacity` batches wait, so memory stays bounded however fast it reads.
/// Either side can stop the other: the producer by ending (with its error, if any), the
/// consumer by `abandon()`, after which the producer's next `put` throws.
final class BatchHandOff<Item: Sendable>: @unchecked Sendable {
    // @unchecked: every field is read and written under `condition`'s lock.
    private let condition = NSCondition()
    private var queue: [[Item]] = []
    private var ended = false
    private var failure: Error?
    private var abandoned = false
    private let capacity: Int

    struct Abandoned: Error {}

    init(capacity: Int) { self.capacity = capacity }

    /// Producer: waits for room, then queues `batch`; throws once the consumer abandoned.
    func put(_ batch: [Item]) throws {
        condition.lock()
        defer { condition.unlock() }
        while queue.count >= capacity && !abandoned { condition.wait() }
        if abandoned { throw Abandoned() }
        queue.append(batch)
        condition.broadcast()
    }

    /// Producer: no more batches; `error` is what stopped it early, if anything did.
    func end(_ error: Error?) {
        condition.lock()
        defer { condition.unlock() }
        ended = true
        failure = error
        condition.broadcast()
    }

    /// Consumer: the next batch, or nil once the producer ended and everything was taken
    /// (rethrowing the producer's error, if it ended with one).
    func take() throws -> [Item]? {
        condition.lock()
        defer { condition.unlock() }
        while queue.isEmpty && !ended { condition.wait() }
        if !queue.isEmpty {
            let batch = queue.removeFirst()
            condition.broadcast()
            return batch
        }
        if let failure, !(failure is Abandoned) { throw failure }
        return nil
    }

    /// Consumer: it stops taking; the producer's next `put` throws.
    func abandon() {
        condition.lock()
        defer { condition.unlock() }
        abandoned = true
        queue.removeAll()
        condition.broadcast()
    }

    /// Waits until the producer has ended.
    func waitUntilEnded() {
        condition.lock()
        defer { condition.unlock() }
        while !ended { condition.wait() }
    }
}
