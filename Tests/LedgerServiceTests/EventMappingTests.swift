import Foundation
import LedgerCore
import LedgerPostgres
@testable import LedgerService
import LedgerTestSupport
import Synchronization
import Testing

@Suite("Event mapping")
struct EventMappingTests {
    @Test("events marked as rendered in jsonb's form are: the writer trusts the mark instead of checking")
    func renderedMarkIsTruthful() throws {
        let no = try MerchantOrderNo("M-1")
        let now = Timestamp.now()
        let events: [LedgerEvent] = [
            .registered(try OrderRequests.registration(
                body: Array(#"{"merchantOrderNo":"M-1","provider":"web3","amount":"40.00","asset":"USDT"}"#.utf8), receivedAt: now)),
            .clientSignal(ClientSignal(merchantOrderNo: no, provider: "banxa", callback: "banxaDidFail",
                                       payload: .object([("z", .number("1.0e2")), ("a", .string("q\"uote\\n"))]),
                                       clientEventId: "6f1c2a4e-3f1d-4c8a-9e2b-5d6f7a8b9c0d", occurredAt: now, receivedAt: now)),
        ]
        for event in events {
            let new = EventMapping.newEvent(event, raw: nil, receipt: Receipt(
                requestID: "r", verifiedBy: "signature", signedWith: .object([("X-Pay-Signature", .string("ab"))])))
            #expect(new.renderedAsJSONB)
            #expect(JSONBText.isCanonical(new.payloadJSON), "\(new.payloadJSON)")
            #expect(JSONBText.isCanonical(new.metadataJSON), "\(new.metadataJSON)")
        }
        // A number jsonb would refuse: not marked, so the writer checks and sends it the SQL way.
        let refused = EventMapping.newEvent(.clientSignal(ClientSignal(
            merchantOrderNo: no, provider: "banxa", callback: "banxaDidFail", payload: .object([("n", .number("1e200000"))]),
            clientEventId: "6f1c2a4e-3f1d-4c8a-9e2b-5d6f7a8b9c0e", occurredAt: now, receivedAt: now)),
            raw: nil, receipt: Receipt(requestID: "r", verifiedBy: "token:t"))
        #expect(!refused.renderedAsJSONB)
    }
}
