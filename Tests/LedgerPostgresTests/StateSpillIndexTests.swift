@testable import LedgerPostgres
import LedgerTestSupport
import Testing

/// `StateSpillIndex` answers as a dictionary of the same entries would, through its growth,
/// with keys that crowd the same buckets.
@Suite("StateSpillIndex: the spill's compact index")
struct StateSpillIndexTests {
    @Test("entries set and changed in a seeded order read back as a Dictionary's; slots lists every one", arguments: [1, 2, 3])
    func sameAsDictionary(seed: UInt64) {
        var random = HostileJSON.Seeded(seed: seed)
        var index = StateSpillIndex()
        var expected: [UInt32: StateSpillIndex.Slot] = [:]
        // Keys from a small range too, so that many probe past each other (0 included).
        for step in 0..<60_000 {
            let key = step % 3 == 0 ? UInt32(random.next() % 5_000) : UInt32(truncatingIfNeeded: random.next())
            let slot = StateSpillIndex.Slot(offsetUnits: Int(random.next() % UInt64(StateSpillIndex.Slot.offsets)),
                                            sizeClass: Int(random.next() % 16), holds: random.next() % 2 == 0)
            index[key] = slot
            expected[key] = slot
            if step % 997 == 0 {
                for (k, v) in expected { #expect(index[k] == v) }
            }
        }
        #expect(index.count == expected.count)
        for (k, v) in expected { #expect(index[k] == v, "key \(k)") }
        var misses = 0
        for _ in 0..<10_000 {
            let key = UInt32(truncatingIfNeeded: random.next())
            if expected[key] == nil { misses += 1; #expect(index[key] == nil) }
        }
        #expect(misses > 9_000)
        #expect(index.slots.count == expected.count)
        #expect(Set(index.slots.map(\.offsetUnits)) == Set(expected.values.map(\.offsetUnits)))
        index.removeAll()
        #expect(index.count == 0 && index.slots.isEmpty)
    }

    @Test("a slot's fields survive packing at their limits; size classes fit the bytes")
    func packing() {
        for slot in [StateSpillIndex.Slot(offsetUnits: StateSpillIndex.Slot.offsets - 1, sizeClass: 15, holds: true),
                     StateSpillIndex.Slot(offsetUnits: 0, sizeClass: 0, holds: false)] {
            var index = StateSpillIndex()
            index[0] = slot
            index[UInt32.max] = slot
            #expect(index[0] == slot && index[UInt32.max] == slot)
        }
        #expect(StateSpillIndex.Slot.sizeClass(for: 1) == 0)
        #expect(StateSpillIndex.Slot.sizeClass(for: 1024) == 0)
        #expect(StateSpillIndex.Slot.sizeClass(for: 1025) == 1)
        #expect(StateSpillIndex.Slot.sizeClass(for: 1024 << 15) == 15)
        #expect(StateSpillIndex.Slot.sizeClass(for: (1024 << 15) + 1) == nil)
    }
}
