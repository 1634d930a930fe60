import Testing
import LedgerCore

@Suite("When the poller asks the gateway")
struct PollPolicyTests {
    @Test("orders not paid and not expired are polled; the wait after each poll doubles from 30 s to 30 minutes")
    func policy() {
        #expect(OrderStatus.allCases.filter(PollPolicy.wantsPolling) == [.awaitingPayment, .confirming, .manualReview])
        #expect((1...9).map { PollPolicy.delaySeconds(afterAttempts: $0) } == [30, 60, 120, 240, 480, 960, 1_800, 1_800, 1_800])
        #expect(PollPolicy.delaySeconds(afterAttempts: 0) == 30 && PollPolicy.delaySeconds(afterAttempts: Int.max) == 1_800)
    }
}
