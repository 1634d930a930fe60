/// When the ledger's poller asks the web3 gateway about an order (providers.md:
/// queryOrder is authoritative; operations.md: an order never polled is due at once).
public enum PollPolicy {
    /// A status a poll can still change: not paid (3, 4) and not expired (5). Manual
    /// review (6) is the gateway's to resolve, so it is asked too.
    public static func wantsPolling(_ status: OrderStatus) -> Bool {
        switch status {
        case .awaitingPayment, .confirming, .manualReview: return true
        case .paid, .completed, .expired: return false
        }
    }

    /// Seconds to the next poll after `attempts` polls: 30 s, doubling to 30 minutes.
    public static func delaySeconds(afterAttempts attempts: Int) -> Int64 {
        let doublings = min(max(attempts - 1, 0), 6)
        return min(30 << Int64(doublings), 1_800)
    }

    /// Orders created longer ago than this are no longer polled (a week).
    public static let maxAgeSeconds: Int64 = 7 * 86_400

    /// Orders asked about in one pass, oldest due first.
    public static let passLimit = 500
}
