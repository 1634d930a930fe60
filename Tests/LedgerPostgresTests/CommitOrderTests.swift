import Foundation
import LedgerCore
import LedgerPostgres
import LedgerTestSupport
import Synchronization
import Testing

/// Appends are serialized by the append lock, so a transaction commits only after
/// every lower position did: a reader that asks for `position > the last it read`
/// (`ledger rebuild`, `ledger verify`) never skips an event that committed late.
@Suite("Reading the log in position order")
struct CommitOrderTests {
    @Test("a reader that follows positions sees each of 10,000 events from 8 concurrent writers exactly once")
    func noSkipsNoRepeats() async throws {
        let db = try TestDatabase.create("follow")
        let writers = 8, perWriter = 1250, batch = 25
        final class Shared: Sendable {
            let done = Atomic<Int>(0)
            let seen = Mutex<[String]>([])
        }
        let shared = Shared()

        let reader = Thread {
            do {
                let connection = try db.connect()
                var after: Int64 = 0
                func drain() throws {
                    while true {
                        let events = try EventStore().read(after: after, limit: 300, on: connection)
                        guard let last = events.last else { return }
                        shared.seen.withLock { $0.append(contentsOf: events.map(\.idempotencyKey)) }
                        after = last.position
                    }
                }
                while shared.done.load(ordering: .acquiring) < writers { try drain() }
                try drain()
            } catch {
                shared.seen.withLock { $0.append("reader failed: \(error)") }
            }
            shared.done.add(1, ordering: .releasing)
        }
        reader.start()

        try await withThrowingTaskGroup(of: Void.self) { group in
            for w in 0..<writers {
                group.addTask {
                    let pool = db.pool(size: 1)
                    for b in 0..<(perWriter / batch) {
                        let events = (0..<batch).map { i in
                            sampleEvent(key: "w\(w)-\(b * batch + i)", stream: "order-W\(w)-\(i % 5)")
                        }
                        _ = try await pool.run { c in try c.transaction { try EventStore().append(events, on: $0) } }
                    }
                    pool.close()
                    shared.done.add(1, ordering: .releasing)
                }
            }
            try await group.waitForAll()
        }
        while shared.done.load(ordering: .acquiring) <= writers { try await Task.sleep(for: .milliseconds(20)) }

        let keys = shared.seen.withLock { $0 }
        #expect(keys.count == writers * perWriter, "first problem: \(keys.first { $0.hasPrefix("reader failed") } ?? "none")")
        #expect(Set(keys).count == keys.count)
        let expected = Set((0..<writers).flatMap { w in (0..<perWriter).map { "w\(w)-\($0)" } })
        #expect(Set(keys) == expected)
    }
}
