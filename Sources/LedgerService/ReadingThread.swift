import Foundation

/// Rows read on a thread of their own: `produce` streams them from PostgreSQL (a COPY on
/// a connection the thread owns meanwhile: an export's, or one of `ledger verify`'s) and
/// hands them out in batches while the consumer works on the ones before, so PostgreSQL
/// never waits for a round trip. At most `capacity` batches wait (memory stays flat); the
/// connection belongs to the thread until it has ended (`stop`, or the last batch taken).
final class ReadingThread<Item: Sendable>: @unchecked Sendable {
    // @unchecked: `handOff` is thread-safe; `thread` is touched only by the consumer.
    private let handOff: BatchHandOff<Item>
    private var started = false

    init(capacity: Int = 3, produce: @escaping @Sendable (_ put: @escaping ([Item]) throws -> Void) throws -> Void) {
        let handOff = BatchHandOff<Item>(capacity: capacity)
        self.handOff = handOff
        let thread = Thread {
            do {
                try produce { try handOff.put($0) }
                handOff.end(nil)
            } catch {
                handOff.end(error)
            }
        }
        thread.name = "ledger reader"
        thread.start()
        started = true
    }

    /// The next batch, or nil once every one was taken; rethrows what stopped the producer.
    func next() throws -> [Item]? {
        try handOff.take()
    }

    /// Stops the producer if it still runs, and waits until it has ended: its connection
    /// is the caller's again.
    func stop() {
        guard started else { return }
        handOff.abandon()
        handOff.waitUntilEnded()
        started = false
    }
}
