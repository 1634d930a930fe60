import Testing
@testable import LedgerCore

/// The spill form (`spillBytes`, what `StateSpill` sets aside) reads back into the state
/// it was made of, for every kind of state `OrderStateBytesTests` generates, and bytes
/// that are not such a form are refused rather than read past.
struct OrderStateSpillBytesTests {
    @Test("generated states read back from the spill form equal, as from the storage form")
    func readsBackEqual() throws {
        var rng = SplitMix64(seed: 0x5911_0B17)
        var withSignals = 0, withRegistration = 0, empty = 0
        for n in 0..<OrderStateBytesTests.cases {
            let no = orderNo("SPILL-\(n)")
            let state = OrderState.replay(no, OrderStateBytesTests.events(&rng, no))
            if state.lastClientSignal != nil { withSignals += 1 }
            if state.registration != nil { withRegistration += 1 }
            if state.eventCount == 0 { empty += 1 }
            let bytes = state.spillBytes()
            let back = try bytes.withUnsafeBytes { try OrderState(spillBytes: $0) }
            #expect(back == state)
            #expect(back.spillBytes() == bytes)
            if back != state { break }
        }
        #expect(withSignals > OrderStateBytesTests.cases / 4)
        #expect(withRegistration > OrderStateBytesTests.cases / 4)
        #expect(empty > 0)
    }

    @Test("every cut-short prefix, bytes after the state and another build's form are refused; flipped bytes never crash")
    func refusesWhatIsNotTheForm() throws {
        var rng = SplitMix64(seed: 0x5911_0B18)
        var checked = 0
        for n in 0..<120 {
            let no = orderNo("SPILL-CUT-\(n)")
            let bytes = OrderState.replay(no, OrderStateBytesTests.events(&rng, no)).spillBytes()
            for cut in 0..<bytes.count {
                #expect(throws: CoreError.self, "cut at \(cut) of \(bytes.count)") {
                    try Array(bytes.prefix(cut)).withUnsafeBytes { try OrderState(spillBytes: $0) }
                }
                checked += 1
            }
            #expect(throws: CoreError.self) { try (bytes + [0]).withUnsafeBytes { try OrderState(spillBytes: $0) } }
            var other = bytes
            other[0] &+= 1
            #expect(throws: CoreError.self) { try other.withUnsafeBytes { try OrderState(spillBytes: $0) } }
            // A byte changed anywhere: refused, or some state; never a read past the end or a trap.
            for _ in 0..<20 {
                var flipped = bytes
                flipped[Int.random(in: 0..<flipped.count, using: &rng)] ^= UInt8.random(in: 1...255, using: &rng)
                _ = try? flipped.withUnsafeBytes { try OrderState(spillBytes: $0) }
            }
        }
        #expect(checked > 10_000)
    }
}
