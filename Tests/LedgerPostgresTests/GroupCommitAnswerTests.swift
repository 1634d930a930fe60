import LedgerCore
import LedgerPostgres
import LedgerTestSupport
import Synchronization
import Testing

/// Callers are answered from the committer's answering queue, after commit:
/// every submitted append gets exactly one answer, in commit order, and
/// shutdown returns only once every answer has been delivered.
@Suite("Group commit answers")
struct GroupCommitAnswerTests {
    @Test("500 appends submitted at once: each answered once, positions in submission order, all before shutdown returns")
    func answeredOnceInOrderBeforeShutdown() throws {
        let db = try TestDatabase.create("answers")
        let pool = db.pool(size: 2)
        defer { pool.close() }
        let committer = GroupCommitter(pool: pool, maxBatch: 64)
        let answers = Mutex<[(index: Int, position: Int64)]>([])
        for index in 0..<500 {
            committer.submit([sampleEvent(key: "answer-\(index)", stream: "order-ANS\(index % 7)")]) { result in
                let position = (try? result.get())?.first?.receipt?.position ?? -1
                answers.withLock { $0.append((index, position)) }
            }
        }
        committer.shutdown()
        let delivered = answers.withLock { $0 }
        #expect(delivered.count == 500)
        #expect(Set(delivered.map(\.index)).count == 500)
        #expect(delivered.allSatisfy { $0.position > 0 })
        // One submitting thread: queue order is commit order is position order, and answers follow it.
        #expect(delivered.map(\.index) == Array(0..<500))
        #expect(delivered.map(\.position) == delivered.map(\.position).sorted())
        #expect(committer.stats.batches >= 8)   // maxBatch 64: several commits, not one
    }
}
