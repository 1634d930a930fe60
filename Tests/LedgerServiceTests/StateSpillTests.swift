import Foundation
import LedgerCore
@testable import LedgerService
import Testing

/// `StateSpill`: an export's order states set aside in a temporary file come back as
/// they went in, the latest one for each order, and nothing for an order never set aside.
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

    @Test("each order's latest state and version come back once, a grown state in a new slot, nothing for an order never set aside")
    func roundTrip() throws {
        let spill = StateSpill()
        var expected: [String: (OrderState, Int?)] = [:]
        for n in 0..<200 {
            let no = "SP-\(n)"
            let state = try Self.state(no, filler: n * 7, status: n % 3 == 0 ? nil : .paid)
            let version: Int? = n % 5 == 0 ? nil : n
            spill.put(try MerchantOrderNo(no).stream, state, version: version)
            expected[no] = (state, version)
        }
        // Set aside again: some the same size (their slot reused), some far larger (a new slot).
        for n in stride(from: 0, to: 200, by: 4) {
            let no = "SP-\(n)"
            let state = try Self.state(no, filler: n % 8 == 0 ? 5_000 : n * 7, status: .confirming)
            spill.put(try MerchantOrderNo(no).stream, state, version: n + 1)
            expected[no] = (state, n + 1)
        }
        for (no, (state, version)) in expected {
            let back = try #require(spill.load(try MerchantOrderNo(no).stream), "\(no)")
            #expect(back.state == state, "\(no)")
            #expect(back.version == version, "\(no)")
        }
        #expect(spill.load(try MerchantOrderNo("SP-never").stream) == nil)
        #expect(spill.written == 250)
        #expect(spill.read == 200)
        // Read back, a state leaves the file: the reader's copy is the current one now.
        #expect(spill.load(try MerchantOrderNo("SP-1").stream) == nil)
        let again = try Self.state("SP-1", filler: 3, status: .paid)
        spill.put(try MerchantOrderNo("SP-1").stream, again, version: 9)
        #expect(spill.load(try MerchantOrderNo("SP-1").stream)?.state == again)
    }
}
