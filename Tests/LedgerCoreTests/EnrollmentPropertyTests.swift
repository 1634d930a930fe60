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
            // The oracle, from the raw events: the phase of the newest signal by (time, position),
            // the intent of the lowest-positioned bankAccountAdded, the newest error's code.
            // Times 0-3 s over up to five events make ties common.
            let signals = events.compactMap { e -> (signal: EnrollmentSignal, position: Int64)? in
                if case .enrollment(let s) = e.event { return (s, e.position) } else { return nil }
            }
            func newer(_ a: (signal: EnrollmentSignal, position: Int64), _ b: (signal: EnrollmentSignal, position: Int64)) -> Bool {
                a.signal.observedAt != b.signal.observedAt ? a.signal.observedAt > b.signal.observedAt : a.position > b.position
            }
            let phases: [String: EnrollmentState.Phase] = ["bankAccountAdded": .bankAccountAdded, "close": .closed, "error": .failed]
            let newest = signals.max { newer($1, $0) }
            #expect(reference.phase == (newest.map { phases[$0.signal.callback]! } ?? .started))
            let firstIntent = signals.filter { $0.signal.callback == "bankAccountAdded" }.min { $0.position < $1.position }
            #expect(reference.intentId == firstIntent?.signal.payload["data"]?["intent_id"]?.stringValue)
            let newestError = signals.filter { $0.signal.callback == "error" }.max { newer($1, $0) }
            #expect(reference.lastError == newestError?.signal.payload["error"]?.stringValue)
        }
    }
}
