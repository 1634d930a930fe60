import Testing
import LedgerCore

@Suite("enrollment reducer: laws")
struct EnrollmentPropertyTests {
    @Test("every permutation and duplication of an enrollment's events gives the same state")
    func permutationInvariance() {
        var rng = SplitMix64(seed: 0x5EED_0E01)
        for _ in 0..<10_000 {
            var events: [RecordedEvent] = []
            for k in 0..<Int.random(in: 0...5, using: &rng) {
                let (callback, payload): (String, JSONValue) = [
                    ("bankAccountAdded", .object([("data", .object([("intent_id", .string("ei_\(k)"))]))])),
                    ("close", .object([])),
                    ("error", .object([("error", .string("declined\(k)")), ("message", .string("m"))])),
                ].randomElement(using: &rng)!
                let e = EnrollmentSignal(enrollmentRef: "E-1", provider: "bankpay", callback: callback, payload: payload,
                                         clientEventId: "id\(k)", receivedAt: at(Int64.random(in: 0...3, using: &rng)))
                events.append(RecordedEvent(event: .enrollment(e), position: Int64(k * 2 + 1), recordedAt: at(100 + Int64(k))))
            }
            let reference = EnrollmentState.replay("E-1", events)
            var mixed = events.shuffled(using: &rng)
            if let extra = events.randomElement(using: &rng) { mixed.append(extra) }
            #expect(EnrollmentState.replay("E-1", mixed) == reference)
            #expect(reference.bankAccountAdded == events.contains { if case .enrollment(let s) = $0.event { return s.callback == "bankAccountAdded" } else { return false } })
        }
    }
}
