import Testing
import LedgerCore

/// Fixtures in the shape of seed 003 (BankPay ACH SDK callback dictionaries).
@Suite("bankpay adapter (seed 003)")
struct BankPaySeedTests {
    static let id1 = "0b7c2a4e-3f1d-4c8a-9e2b-5d6f7a8b9c01"
    static let id2 = "0b7c2a4e-3f1d-4c8a-9e2b-5d6f7a8b9c02"
    static let id3 = "0b7c2a4e-3f1d-4c8a-9e2b-5d6f7a8b9c03"

    func enrollment(_ callback: String, _ payload: String, id: String, at time: String) throws -> EnrollmentSignal {
        try ClientEventRequest.parseEnrollment(enrollmentRef: "ENR-42", body: bytes(#"{"provider":"bankpay","callback":"\#(callback)","payload":\#(payload),"clientEventId":"\#(id)","occurredAt":"\#(time)"}"#), receivedAt: t0)
    }

    @Test("enrollment callbacks go to the enrollment stream and fold into its read model")
    func enrollmentFlow() throws {
        let added = try enrollment("bankAccountAdded", #"{"type":"bankAccountAdded","data":{"intent_id":"ei_123"}}"#, id: Self.id1, at: "2026-11-29T12:00:00Z")
        let closed = try enrollment("close", #"{"type":"close"}"#, id: Self.id2, at: "2026-11-29T12:00:05Z")
        #expect(LedgerEvent.enrollment(added).stream == "enrollment-ENR-42")
        #expect(LedgerEvent.enrollment(added).type == "EnrollmentSignal")
        let events = recorded([.enrollment(added), .enrollment(closed)])
        var s = EnrollmentState(enrollmentRef: "ENR-42")
        #expect(s.phase == .started)
        s = EnrollmentState.reduce(s, events[0])
        #expect(s.phase == .bankAccountAdded && s.intentId == "ei_123")
        s = EnrollmentState.reduce(s, events[1])
        #expect(s.phase == .closed && s.bankAccountAdded && s.eventCount == 2)
        // Any order, duplicates included, gives the same state.
        var r = EnrollmentState(enrollmentRef: "ENR-42")
        for e in [events[1], events[0], events[1]] { r = EnrollmentState.reduce(r, e) }
        #expect(r == s)
        #expect(EnrollmentState.replay("ENR-42", events.reversed()) == s)
        #expect(r.toJSON()["phase"] == .string("closed"))
    }

    @Test("an enrollment error dictionary marks the enrollment failed with its code and message")
    func enrollmentError() throws {
        let failed = try enrollment("onError", #"{"error":"declined","message":"According to our records, this financial institution does not permit ACH transactions.","errors":{"account":["not permitted"]}}"#, id: Self.id3, at: "2026-11-29T12:00:09Z")
        #expect(failed.callback == "error")
        let s = EnrollmentState.reduce(EnrollmentState(enrollmentRef: "ENR-42"), recorded([.enrollment(failed)])[0])
        #expect(s.phase == .failed && s.lastError == "declined")
        #expect(s.lastErrorMessage?.hasPrefix("According to our records") == true)
    }

    @Test("the seed's enrollmentError dictionary (type enrollmentError, data {error, message}) marks the enrollment failed")
    func seedEnrollmentErrorShape() throws {
        let dictionary = #"{"type":"enrollmentError","data":{"error":"declined","message":"According to our records, this financial institution does not permit ACH transactions."}}"#
        for callback in ["onSuccess", "enrollmentError", "error"] {
            let failed = try enrollment(callback, dictionary, id: Self.id3, at: "2026-11-29T12:00:09Z")
            #expect(failed.callback == "error")
            let s = EnrollmentState.reduce(EnrollmentState(enrollmentRef: "ENR-42"), recorded([.enrollment(failed)])[0])
            #expect(s.phase == .failed && s.lastError == "declined")
        }
        #expect(throws: CoreError.self) { try enrollment("enrollmentError", #"{"type":"enrollmentError","data":{}}"#, id: Self.id3, at: "2026-11-29T12:00:09Z") }
        #expect(throws: CoreError.self) { try enrollment("enrollmentError", #"{"type":"enrollmentError"}"#, id: Self.id3, at: "2026-11-29T12:00:09Z") }
        // The two shapes mixed: the type of the seed's, the code at the top as providers.md has it.
        let mixed = try enrollment("onError", #"{"type":"enrollmentError","error":"declined","message":"no ACH here"}"#, id: Self.id3, at: "2026-11-29T12:00:09Z")
        let s = EnrollmentState.reduce(EnrollmentState(enrollmentRef: "ENR-42"), recorded([.enrollment(mixed)])[0])
        #expect(s.phase == .failed && s.lastError == "declined" && s.lastErrorMessage == "no ACH here")
    }

    @Test("transaction flow callbacks are client signals on the order; enrollment-only callbacks are refused there")
    func transactionFlow() throws {
        func relay(_ callback: String, _ payload: String) throws -> ClientSignal {
            try ClientEventRequest.parse(merchantOrderNo: orderNo("SO-9"), body: bytes(#"{"provider":"bankpay","callback":"\#(callback)","payload":\#(payload),"clientEventId":"\#(Self.id1)"}"#), receivedAt: t0)
        }
        let fee = try relay("acceptedTransactionIntentServiceFee", #"{"type":"acceptedTransactionIntentServiceFee","data":{"transactionIntentId":"ti_9"}}"#)
        #expect(fee.callback == "acceptedTransactionIntentServiceFee" && fee.payload["data"]?["transactionIntentId"] == .string("ti_9"))
        #expect(try relay("onSuccess", #"{"type":"close"}"#).callback == "close")
        #expect(try relay("error", #"{"error":"declined","message":"no"}"#).callback == "error")
        #expect(coreError { try relay("bankAccountAdded", #"{"type":"bankAccountAdded","data":{"intent_id":"x"}}"#) }?.reason == "unknown_callback")
        #expect(coreError { try relay("acceptedTransactionIntentServiceFee", #"{"type":"close"}"#) }?.reason == "callback_payload_mismatch")
        #expect(coreError { try relay("acceptedTransactionIntentServiceFee", #"{"data":{}}"#) }?.reason == "callback_payload_mismatch")
        #expect(coreError { try relay("error", #"{"message":"no code"}"#) }?.reason == "callback_payload_mismatch")
        #expect(coreError { try ClientEventRequest.parseEnrollment(enrollmentRef: "bad ref", body: bytes("{}"), receivedAt: t0) }?.reason == "invalid_enrollment_ref")
    }

    @Test("a settlement the merchant server mapped is a generic query observation (the response stays in the request's raw bytes)")
    func settlementAsQuery() throws {
        let body = bytes(#"{"provider":"bankpay","response":{"status":4,"providerStatus":"settled","transactionIntentId":"ti_9","amount":"125.00","asset":"USD"},"observedAt":"2026-11-30T09:00:00Z"}"#)
        let e = try OrderRequests.observation(merchantOrderNo: orderNo("SO-9"), body: body, receivedAt: t0)
        guard case .observed(let o) = e else { Issue.record("not an observation"); return }
        #expect(o.status == .completed && o.providerStatus == "settled" && o.amount == "125.00")
        #expect(o.observedAt.rfc3339 == "2026-11-30T09:00:00Z" && o.body == nil)
    }
}
