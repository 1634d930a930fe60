import Foundation
import Glibc
import LedgerCore
import LedgerPostgres
import Testing

/// `StateSpill`: order states set aside in a temporary file come back as they went in,
/// the latest one for each order with its marks, and nothing for an order never set
/// aside; a state is never lost to another name sharing its hash.
@Suite("StateSpill: order states set aside and read back")
struct StateSpillTests {
    /// A registered order, its provider order id `filler` long (to grow the state), then `status`.
    static func state(_ no: String, filler: Int, status: OrderStatus?) throws -> OrderState {
        let order = try MerchantOrderNo(no), t = Timestamp(seconds: 1_764_417_600)
        var events = [RecordedEvent(event: .registered(OrderRegistration(
            merchantOrderNo: order, provider: "web3", amount: "40.00", asset: "USDT", chainId: nil, tokenId: nil,
            fiatCurrency: nil, fiatAmount: nil, externalCustomerId: "é \"x\"", providerOrderId: String(repeating: "p", count: filler),
            providerResponse: nil, registeredAt: t)), position: 1, recordedAt: t)]
        if let status {
            events.append(RecordedEvent(event: .observed(StatusObservation(
                merchantOrderNo: order, provider: "web3", source: .webhook, status: status, providerStatus: String(status.rawValue),
                observedAt: t, amount: "40.00", asset: "USDT", fiatAmount: nil, fiatCurrency: nil, txHash: "0x1",
                providerOrderId: nil, actor: nil, reason: nil, keyId: "k1", leftOut: nil, body: nil, idempotencyKey: "web3:\(no)")),
                position: 2, recordedAt: t))
        }
        return OrderState.replay(order, events)
    }

    static func marks(_ version: Int?) -> StateSpill.Marks { (Int64(version ?? -1), 7) }

    /// Each state written as it is set aside; new slots gathered 4 KB at a time (written
    /// midway, some read back from the file and some from memory); all in memory.
    static let gatherings = [0, 4096, 1 << 20]

    @Test("each order's latest state and marks come back once, a grown state in a new slot, nothing for an order never set aside",
          arguments: gatherings)
    func roundTrip(gathering: Int) throws {
        let spill = StateSpill(gathering: gathering)
        var expected: [String: (OrderState, Int?)] = [:]
        for n in 0..<200 {
            let no = "SP-\(n)"
            let state = try Self.state(no, filler: n * 7, status: n % 3 == 0 ? nil : .paid)
            let version: Int? = n % 5 == 0 ? nil : n
            #expect(spill.put(try MerchantOrderNo(no).stream, state, marks: Self.marks(version)))
            expected[no] = (state, version)
        }
        // Set aside again: some the same size (their slot reused), some far larger (a new slot).
        for n in stride(from: 0, to: 200, by: 4) {
            let no = "SP-\(n)"
            let state = try Self.state(no, filler: n % 8 == 0 ? 5_000 : n * 7, status: .confirming)
            #expect(spill.put(try MerchantOrderNo(no).stream, state, marks: Self.marks(n + 1)))
            expected[no] = (state, n + 1)
        }
        for (no, (state, version)) in expected {
            let back = try #require(try spill.load(try MerchantOrderNo(no).stream), "\(no)")
            #expect(back.state == state, "\(no)")
            #expect(back.marks == Self.marks(version), "\(no)")
        }
        #expect(try spill.load(try MerchantOrderNo("SP-never").stream) == nil)
        #expect(spill.written == 250)
        #expect(spill.read == 200)
        #expect(spill.isEmpty)
        // Read back, a state leaves the file: the reader's copy is the current one now.
        #expect(try spill.load(try MerchantOrderNo("SP-1").stream) == nil)
        let again = try Self.state("SP-1", filler: 3, status: .paid)
        spill.put(try MerchantOrderNo("SP-1").stream, again, marks: Self.marks(9))
        #expect(try spill.load(try MerchantOrderNo("SP-1").stream)?.state == again)
    }

    @Test("drain gives every state still held, once, with its marks, and leaves the file empty; forget takes a state out",
          arguments: gatherings)
    func drain(gathering: Int) throws {
        let spill = StateSpill(gathering: gathering)
        for n in 0..<300 {
            spill.put("D-\(n)", try Self.state("D-\(n)", filler: n % 50, status: .paid), marks: (Int64(n), Int64(n % 2)))
        }
        for n in stride(from: 0, to: 300, by: 3) { _ = try spill.load("D-\(n)") }
        for n in stride(from: 1, to: 300, by: 3) { spill.forget("D-\(n)") }
        var drained: [String: StateSpill.Marks] = [:]
        try spill.drain { name, state, marks in
            #expect(state.merchantOrderNo.value == name)
            #expect(drained.updateValue(marks, forKey: name) == nil, "\(name) drained twice")
        }
        #expect(drained.keys.sorted() == (0..<300).filter { $0 % 3 == 2 }.map { "D-\($0)" }.sorted())
        #expect(drained.allSatisfy { name, marks in marks == (Int64(name.dropFirst(2))!, Int64(name.dropFirst(2))! % 2) })
        #expect(spill.isEmpty)
        try spill.drain { name, _, _ in Issue.record("\(name) drained again") }
        #expect(try spill.load("D-2") == nil)
    }

    @Test("a write that fails (a full disk): nothing more is set aside, and every state held, written or still gathered, reads back",
          arguments: gatherings)
    func failedWrite(gathering: Int) throws {
        let spill = StateSpill(gathering: gathering)
        var writes = 0
        spill.writeAt = { fd, bytes, offset in
            writes += 1
            return writes <= 3 ? pwrite(fd, bytes.baseAddress, bytes.count, offset) : -1
        }
        var held: [String: OrderState] = [:]
        var refused = 0
        for n in 0..<60 {
            let state = try Self.state("FW-\(n)", filler: n * 9, status: .confirming)
            if spill.put("FW-\(n)", state, marks: (Int64(n), 0)) { held["FW-\(n)"] = state } else { refused += 1 }
        }
        if gathering >= 1 << 20 {
            // All gathered in memory: nothing was written, nothing failed.
            #expect(writes == 0 && refused == 0)
        } else {
            #expect(writes == 4, "writes stop at the first that fails")
            #expect(refused > 0 && held.count >= 3, "held \(held.count), refused \(refused)")
            // Refused from the failure on: every state after the first refused one is refused too.
            let firstRefused = (0..<60).first { held["FW-\($0)"] == nil }!
            #expect((firstRefused..<60).allSatisfy { held["FW-\($0)"] == nil })
        }
        for (name, state) in held.sorted(by: { $0.key < $1.key }) {
            #expect(try spill.load(name)?.state == state, "\(name)")
        }
        for n in 0..<60 where held["FW-\(n)"] == nil { #expect(try spill.load("FW-\(n)") == nil) }
    }

    @Test("a name whose hash another's shares is refused, not written over the other's state, and forgetting it leaves the other's")
    func sharedHash() throws {
        var seen: [UInt32: String] = [:]
        var pair: (String, String)?
        for n in 0..<2_000_000 where pair == nil {
            let name = "H-\(n)"
            if let other = seen.updateValue(name, forKey: StateSpill.key(name)) { pair = (other, name) }
        }
        let (first, second) = try #require(pair, "two names sharing 32 bits of hash among 2,000,000")
        let spill = StateSpill()
        let kept = try Self.state(first, filler: 10, status: .paid)
        #expect(spill.put(first, kept, marks: (1, 1)))
        #expect(!spill.put(second, try Self.state(second, filler: 10, status: .paid), marks: (2, 2)), "refused: the slot holds the other's only copy")
        #expect(try spill.load(second) == nil)
        spill.forget(second)
        #expect(try spill.load(first)?.state == kept)
        // Once the first is read back, the slot is free for the second.
        let other = try Self.state(second, filler: 10, status: .confirming)
        #expect(spill.put(second, other, marks: (3, 3)))
        #expect(try spill.load(first) == nil)
        #expect(try spill.load(second)?.state == other)
    }
}
