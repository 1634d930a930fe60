import LedgerCore
import Testing

@Suite("Random bytes drawn from a pool")
struct RandomPoolTests {
    @Test("ids drawn across many refills, from several threads, are all different and of the length asked")
    func freshBytes() async {
        let pool = RandomPool(refillBytes: 256)   // a refill every 16 ids
        let drawn = await withTaskGroup(of: [[UInt8]].self) { group in
            for _ in 0..<4 { group.addTask { (0..<500).map { _ in pool.bytes(16) } } }
            var all: [[UInt8]] = []
            for await part in group { all += part }
            return all
        }
        #expect(drawn.count == 2_000)
        #expect(drawn.allSatisfy { $0.count == 16 })
        #expect(Set(drawn).count == drawn.count, "no 16 bytes handed out twice")
        // Not constant: across 2,000 draws every byte position takes many values.
        #expect((0..<16).allSatisfy { i in Set(drawn.map { $0[i] }).count > 100 })
        #expect(pool.bytes(200).count == 200, "a draw larger than a quarter of the pool goes to OpenSSL directly")
    }
}
