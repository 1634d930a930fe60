import Foundation
import LedgerCore
import LedgerPostgres

/// Order documents read in batches: GET /v1/orders/{no} requests queue their
/// order number here, and one thread reads every queued number with one
/// indexed select (`OrderReadModel.documents`), then answers each request.
///
/// Why: a read by key costs PostgreSQL little, but each statement costs a
/// round trip, a wake-up on both sides and the protocol's per-statement work,
/// and the HTTP thread that waits for it does nothing else. Under load a batch
/// holds many reads, so those costs are shared; alone, a read waits for one
/// round trip as before. The select runs on a read connection (statement
/// timeout), so a stuck server fails the batch rather than hanging it.
package final class DocumentBatcher: @unchecked Sendable {
    // @unchecked: `queue` and `stopping` are guarded by `condition`; the thread alone
    // uses the connection it borrows.
    /// A read's answer: `.body` or `.missing` (never `.stale`: stale rows are derived here).
    package typealias Answer = @Sendable (Result<OrderReadModel.StoredDocument, Error>) -> Void

    private struct Request {
        let no: String
        let masked: Bool
        let answer: Answer
    }

    private let pool: ConnectionPool
    private let orders = OrderReadModel()
    private let maxBatch: Int
    private let condition = NSCondition()
    private var queue: [Request] = []
    private var stopping = false
    private var running = true

    package init(pool: ConnectionPool, maxBatch: Int = 256) {
        self.pool = pool
        self.maxBatch = maxBatch
        let thread = Thread { [self] in self.loop() }
        thread.name = "ledger.document-reads"
        thread.start()
    }

    /// Queues a read; `answer` runs on the batcher's thread (keep it short) with the
    /// document as a reader who sees masked (or unmasked) e-mail addresses wants it.
    package func read(_ no: MerchantOrderNo, masked: Bool, answer: @escaping Answer) {
        condition.lock()
        if stopping {
            condition.unlock()
            answer(.failure(PostgresError.connectionFailed("the ledger is shutting down")))
            return
        }
        queue.append(Request(no: no.value, masked: masked, answer: answer))
        condition.signal()
        condition.unlock()
    }

    /// Answers what is queued, then stops the thread.
    package func stop() {
        condition.lock()
        stopping = true
        condition.broadcast()
        while running { condition.wait() }
        condition.unlock()
    }

    private func loop() {
        while true {
            condition.lock()
            while queue.isEmpty && !stopping { condition.wait() }
            if queue.isEmpty && stopping {
                running = false
                condition.broadcast()
                condition.unlock()
                return
            }
            let taken = min(queue.count, maxBatch)
            let batch = Array(queue[..<taken])
            queue.removeFirst(taken)
            condition.unlock()
            serve(batch)
        }
    }

    private func serve(_ batch: [Request]) {
        var numbers: [String] = []
        var seen = Set<String>()
        for request in batch where seen.insert(request.no).inserted { numbers.append(request.no) }
        let found: [String: OrderDocuments]
        do {
            found = try pool.withConnection { c in try documents(numbers, on: c) }
        } catch {
            for request in batch { request.answer(.failure(error)) }
            return
        }
        for request in batch {
            guard let documents = found[request.no] else {
                request.answer(.success(.missing))
                continue
            }
            request.answer(.success(.body(documents.body(masked: request.masked))))
        }
    }

    /// The stored documents of `numbers`. A row without a current document (written
    /// before migration 014, or by another rendering version) is derived from its state
    /// here, on this thread and connection: after a rendering change every untouched
    /// order is stale, and deriving them elsewhere would let reads pile up unbounded.
    private func documents(_ numbers: [String], on c: PostgresConnection) throws -> [String: OrderDocuments] {
        var out: [String: OrderDocuments] = [:]
        for (no, row) in try orders.documents(numbers, on: c) {
            if let document = row.document {
                out[no] = OrderDocuments(document: document, masked: row.masked == document ? nil : row.masked)
            } else if let loaded = try orders.load(try MerchantOrderNo(stored: no), on: c) {
                out[no] = OrderDocuments(loaded.0)
            }
        }
        return out
    }
}
