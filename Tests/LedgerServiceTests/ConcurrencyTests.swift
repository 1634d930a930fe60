import Foundation
import LedgerCore
import LedgerPostgres
import LedgerTestSupport
import Testing

/// Durable acknowledgement under concurrency: a 200 means committed, once.
@Suite("Concurrent webhooks")
struct ConcurrencyTests {
    @Test("400 webhooks on 40 orders in flight at once: every acknowledged one is stored exactly once and the chain verifies")
    func fourHundredWebhooks() throws {
        let ledger = try LedgerFixture.start("concurrent", poolSize: 8) { $0.workerThreads = 16 }
        defer { ledger.stop() }

        // 40 orders × 5 distinct bodies, each delivered twice with different
        // timestamps (a provider retry), shuffled.
        let now = Timestamp.now().seconds
        let statuses = [1, 2, 5, 3, 4]
        var bodies: [[UInt8]] = []
        for order in 0..<40 {
            for (j, status) in statuses.enumerated() {
                bodies.append(LedgerFixture.web3Body("CC-\(order)", status: status, extra: #","seq":\#(j)"#))
            }
        }
        var deliveries = (0..<bodies.count).flatMap { [($0, now - 5), ($0, now)] }
        deliveries.shuffle()
        #expect(deliveries.count == 400)

        // One connection a delivery, all 400 open and each request sent in full before any
        // answer is read: the server holds all 400 at once (16 workers, one writer).
        let connections = try deliveries.map { _ in try TestConnection(port: ledger.port, timeout: 60) }
        for (connection, (index, timestamp)) in zip(connections, deliveries) {
            let headers = LedgerFixture.web3Headers(bodies[index], timestamp: String(timestamp))
                .map { "\($0.0): \($0.1)\r\n" }.joined()
            try connection.send(Array(("POST /v1/webhooks/web3 HTTP/1.1\r\nHost: t\r\nContent-Type: application/json\r\n"
                                       + headers + "Content-Length: \(bodies[index].count)\r\n\r\n").utf8) + bodies[index])
        }
        let replies = Locked([(body: Int, status: Int, eventId: String?, duplicate: Bool?, error: String?)]())
        let allDeliveries = deliveries
        let threads = 8
        onThreads(threads) { t in
            for d in stride(from: t, to: allDeliveries.count, by: threads) {
                let index = allDeliveries[d].0
                do {
                    let reply = try connections[d].readResponse()
                    replies.with { $0.append((index, reply.status, reply["eventId"]?.stringValue, reply["duplicate"]?.boolValue, nil)) }
                } catch {
                    replies.with { $0.append((index, 0, nil, nil, "\(error)")) }
                }
            }
        }

        let all = replies.snapshot
        #expect(all.count == 400)
        let acknowledged = all.filter { $0.status == 200 }
        let refused = all.filter { $0.status != 200 }
        #expect(refused.isEmpty, "\(refused.count) deliveries were not acknowledged, e.g. \(refused.prefix(3))")

        let c = try ledger.connect()
        defer { c.close() }
        // Every acknowledged body is stored exactly once, under the eventId it was acknowledged with.
        let stored = try c.query("SELECT idempotency_key, event_id::text AS event_id FROM ledger.events")
        var byKey: [String: [String]] = [:]
        for r in 0..<stored.count { byKey[try stored.string(r, "idempotency_key"), default: []].append(try stored.string(r, "event_id")) }
        for index in Set(acknowledged.map(\.body)) {
            let rows = byKey[LedgerFixture.web3Key(bodies[index])] ?? []
            #expect(rows.count == 1, "body \(index) acknowledged but stored \(rows.count) times")
            let acks = acknowledged.filter { $0.body == index }
            #expect(acks.allSatisfy { $0.eventId == rows.first }, "body \(index): acks \(acks.map(\.eventId)) vs stored \(rows)")
            #expect(acks.filter { $0.duplicate == false }.count <= 1, "body \(index) was appended twice: \(acks)")
        }
        #expect(stored.count == Set(acknowledged.map(\.body)).count, "no event that was not acknowledged, none twice")
        #expect(acknowledged.filter { $0.duplicate == false }.count == stored.count)

        // The read models saw every event, and the chain is intact.
        let counts = try c.query("SELECT count(*) AS n, sum(event_count) AS events FROM ledger.orders WHERE merchant_order_no LIKE 'CC-%'")
        #expect(try counts.int64(0, "n") == 40)
        #expect(try counts.int64(0, "events") == Int64(stored.count))
        let paid = try c.query("SELECT count(*) AS n FROM ledger.orders WHERE status = 4 AND paid")
        #expect(try paid.int64(0, "n") == 40, "every order saw its completed webhook")
        #expect(try ChainVerifier().verify(on: c) == .intact(events: Int64(stored.count), head: Int64(stored.count)))
        #expect(try ledger.metric("ledger_events_appended_total") == Double(stored.count))
        #expect(try ledger.verify() == [], "ledger verify: chain and read models against a replay")
    }
}
