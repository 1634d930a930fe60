import Foundation
import LedgerCore
import Testing

/// lifecycle.md: the state is a pure function of an order's events, whatever
/// order they arrive in and however often. Shown here end to end, over HTTP.
@Suite("Out-of-order webhooks converge to the same read model")
final class ConvergenceTests {
    let ledger: LedgerFixture
    init() throws { ledger = try .start("converge") }
    deinit { ledger.stop() }

    /// Status webhooks signed at distinct times: confirming, expired, paid, manual review, completed.
    static let history: [(status: Int, secondsAgo: Int64)] = [(2, 50), (5, 40), (3, 30), (6, 20), (4, 10)]

    private func body(_ no: String, _ status: Int) -> [UInt8] {
        Array(#"{"merchantOrderNo":"\#(no)","orderNo":"GW-77","status":\#(status),"statusText":"s\#(status)","amount":"40","txHash":"0x77","chainId":"56","tokenId":"usdt"}"#.utf8)
    }

    private func deliver(_ no: String, _ indices: [Int], now: Int64) throws {
        for i in indices {
            let (status, ago) = Self.history[i]
            let reply = try ledger.sendWeb3(body(no, status), timestamp: now - ago)
            #expect(reply.status == 200, "\(no) status \(status): \(reply)")
        }
    }

    /// The read model without what necessarily differs between two orders: the
    /// number, when the ledger recorded things, and ledger positions.
    private func comparable(_ no: String, ignoring extra: Set<String> = []) throws -> JSONValue {
        let reply = try ledger.order(no, token: ledger.auditor)
        #expect(reply.status == 200, "\(no): \(reply)")
        return try #require(reply.json).removing(Set(["merchantOrderNo", "updatedAt", "lastPosition", "position"]).union(extra))
    }

    @Test("the same status webhooks delivered in three different orders, with redeliveries, give identical read models")
    func webhooksInAnyOrder() throws {
        let now = Timestamp.now().seconds
        try deliver("X-1", [0, 1, 2, 3, 4], now: now)
        try deliver("X-2", [4, 3, 2, 1, 0], now: now)
        try deliver("X-3", [2, 4, 2, 0, 3, 1, 4, 0], now: now)   // with redeliveries

        let forward = try comparable("X-1")
        #expect(forward["status"]?.int64Value == 4, "paid is sticky and 4 beats 3: \(forward)")
        #expect(forward["paid"]?.boolValue == true)
        #expect(forward["latePayment"]?.boolValue == true, "an expiry older than the first payment: \(forward)")
        #expect(forward["attention"]?.boolValue == true, "a manual review newer than the first payment: \(forward)")
        let conflicts = forward["conflicts"]?.arrayValue ?? []
        #expect(conflicts.contains { $0["kind"]?.stringValue == "status_conflict" && $0["status"]?.int64Value == 6 }, "\(conflicts)")
        #expect(forward["eventCount"]?.int64Value == 5)

        #expect(try comparable("X-2") == forward)
        #expect(try comparable("X-3") == forward)
        #expect(try ledger.verify() == [], "the read models equal a replay of their events")
    }

    @Test("a registration arriving before or after the webhooks gives the same read model")
    func registrationInAnyOrder() throws {
        let now = Timestamp.now().seconds
        #expect(try ledger.register("Y-1", amount: "40.0").status == 201)
        try deliver("Y-1", [0, 1, 2], now: now)
        try deliver("Y-2", [2, 1, 0], now: now)
        #expect(try ledger.register("Y-2", amount: "40.0").status == 201)

        // createdAt is the registration's own receipt time, which differs by construction.
        let first = try comparable("Y-1", ignoring: ["createdAt"])
        #expect(first["status"]?.int64Value == 3)
        #expect(first["expectedAmount"]?.stringValue == "40.0")
        #expect(first["attention"]?.boolValue == false, "40 and 40.0 are the same amount: \(first)")
        #expect(try comparable("Y-2", ignoring: ["createdAt"]) == first)
    }
}
