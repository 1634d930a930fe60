import Foundation
import LedgerCore
import LedgerPostgres
@testable import LedgerService
import LedgerTestSupport
import Testing

/// The export path as rewritten for speed (one binary COPY on a thread of its own, the
/// chain checked on the rows as they stream, `status_after` folded from kept states and
/// from reads beside the COPY): a closed period re-exports byte for byte, `status_after`
/// equals a fold of each order's whole stream, and a tampered event in the period, just
/// after it, or before it (folded into a status) stops the export with `ChainBreak`.
@Suite("Exports re-read a closed period byte for byte, and refuse a tampered log")
struct ExportRereadTests {
    let db: TestDatabase
    init() throws { db = try TestDatabase.create("reread") }

    /// A web3 webhook for `no` with `status`, through the projection, as the service stores it.
    func observe(_ no: String, status: Int) throws {
        let pool = db.pool(size: 1)
        let committer = GroupCommitter(pool: pool, projector: OrderProjection())
        defer { committer.shutdown(); pool.close() }
        let now = Timestamp.now()
        let body = Array(#"{"merchantOrderNo":"\#(no)","status":\#(status),"amount":"40.00","txHash":"0x\#(status)"}"#.utf8)
        let ts = String(now.seconds)
        let headers = ["x-pay-timestamp": ts, "x-pay-signature": Web3Webhook.signature(key: "k", timestamp: ts, body: body)]
        let (_, event) = try Web3Webhook.ingest(headers: headers, body: body, keys: ["k"], now: now)
        _ = try committer.append([EventMapping.newEvent(event, raw: body, receipt: Receipt(requestID: "test", verifiedBy: "signature"))])
    }

    static func pause() { Thread.sleep(forTimeInterval: 0.02) }

    /// Web3 webhooks with `status`, one for each of `orders`, appended together through the projection.
    func observeAll(_ orders: [String], status: Int) throws {
        let pool = db.pool(size: 1)
        let committer = GroupCommitter(pool: pool, projector: OrderProjection())
        defer { committer.shutdown(); pool.close() }
        let now = Timestamp.now(), ts = String(now.seconds)
        let events = try orders.map { no in
            let body = Array(#"{"merchantOrderNo":"\#(no)","status":\#(status),"amount":"1.00","txHash":"0x\#(status)"}"#.utf8)
            let headers = ["x-pay-timestamp": ts, "x-pay-signature": Web3Webhook.signature(key: "k", timestamp: ts, body: body)]
            let (_, event) = try Web3Webhook.ingest(headers: headers, body: body, keys: ["k"], now: now)
            return EventMapping.newEvent(event, raw: body, receipt: Receipt(requestID: "test", verifiedBy: "signature"))
        }
        _ = try committer.append(events)
    }

    /// Orders paid before the period, 1,500 registrations (two batches of rows) and
    /// the completion of an order paid before it in the period, one more after it.
    func ledger() throws -> (from: Timestamp, to: Timestamp) {
        try TestWrites(pool: db.pool(size: 1)).registerAndPay("X-1")   // positions 1, 2
        try TestWrites(pool: db.pool(size: 1)).registerAndPay("X-0")   // positions 3, 4
        Self.pause()
        let from = Timestamp.now()
        try observe("X-0", status: 4)                                   // position 5
        try TestWrites(pool: db.pool(size: 1)).registrations(1_500)    // 6...1505
        try observe("X-1", status: 4)                                   // 1506: its status folds positions 1 and 2 in
        Self.pause()
        let to = Timestamp.now()
        Self.pause()
        try observe("X-0", status: 5)                                   // 1507, after the period
        return (from, to)
    }

    func export(_ kind: ExportKind, _ period: (from: Timestamp, to: Timestamp), format: ExportFormat = .csv,
                cachedStreams: Int = ExportSession.defaultCachedStreams) throws -> [UInt8] {
        let session = ExportSession(kind: kind, from: period.from, to: period.to, format: format,
                                    connection: try db.connect(), cachedStreams: cachedStreams)
        var bytes = [UInt8]()
        _ = try session.run(write: { bytes += $0 })
        return bytes
    }

    @Test("events: the same bytes again, with one kept state or many, csv and jsonl; status_after is each order's whole stream folded")
    func eventsAgain() throws {
        let period = try ledger()
        for format in ExportFormat.allCases {
            let first = try export(.events, period, format: format)
            #expect(try export(.events, period, format: format) == first, "\(format): a closed period gives the same bytes")
            #expect(try export(.events, period, format: format, cachedStreams: 1) == first, "\(format): one kept state, the same bytes")
        }
        let rows = ExportTests.csvRows(try export(.events, period)).dropFirst()
        #expect(rows.count == 1_502, "positions 5 to 1506")
        #expect(rows.map { Int64($0[0]) ?? 0 } == Array(5...1_506), "ledger order, nothing outside the period")
        // The oracle: each order's events read whole and folded up to the row's position.
        let c = try db.connect()
        defer { c.close() }
        for row in rows where row[0] == "5" || row[0] == "1506" || row[0] == "1000" || row[0] == "1001" {
            let no = try MerchantOrderNo(row[4])
            let events = try EventStore().read(stream: no.stream, on: c).filter { $0.position <= Int64(row[0])! }
            let status = OrderState.replay(no, try events.map(EventMapping.recorded)).status
            #expect(row[9] == String(status.rawValue), "status_after at \(row[0]): \(row)")
        }
        #expect(rows.last?[9] == "4", "X-1 completed, folded from its events before the period: \(rows.last ?? [])")
    }

    @Test("events of orders whose events lie far apart: states set aside in a file and read back give the bytes that keeping every state gives")
    func interleavedOrders() throws {
        let from = Timestamp.now()
        Self.pause()
        try TestWrites(pool: db.pool(size: 1)).registrations(300)                        // P-00000... at 1...300
        let orders = (0..<300).map { "P-" + String($0 + 100_000).dropFirst() }
        // Awaiting, paid, then a late "confirming" the lifecycle does not let undo the payment:
        // a state read back wrong would show it.
        for status in [1, 3, 2] { try observeAll(orders, status: status) }               // 301...1200
        Self.pause()
        let period = (from: from, to: Timestamp.now())
        let everyState = try export(.events, period, cachedStreams: 10_000)
        let session = ExportSession(kind: .events, from: period.from, to: period.to, format: .csv,
                                    connection: try db.connect(), cachedStreams: 16)
        var bytes = [UInt8]()
        _ = try session.run(write: { bytes += $0 })
        #expect(bytes == everyState)
        #expect(session.statesSetAside.read > 500, "read back, not folded again: \(session.statesSetAside)")
        let rows = ExportTests.csvRows(bytes).dropFirst()
        #expect(rows.count == 1_200)
        #expect(rows.map { $0[9] } == Array(repeating: "1", count: 600) + Array(repeating: "3", count: 600),
                "registered and awaiting, then paid, and still paid after the late confirming")
        // Orders whose events lie together: nothing comes back, nothing is set aside.
        Self.pause()
        let together = Timestamp.now()
        for n in 0..<60 { try TestWrites(pool: db.pool(size: 1)).registerAndPay("T-\(n)") }
        Self.pause()
        let grouped = ExportSession(kind: .events, from: together, to: Timestamp.now(), format: .csv,
                                    connection: try db.connect(), cachedStreams: 16)
        var groupedBytes = [UInt8]()
        _ = try grouped.run(write: { groupedBytes += $0 })
        #expect(ExportTests.csvRows(groupedBytes).count == 121)
        #expect(grouped.statesSetAside.written == 0)
    }

    @Test("events: a tampered event in the period, the one just after it, or one folded into a status from before it stops the export with ChainBreak")
    func tamperedEvents() throws {
        let period = try ledger()
        let c = try db.connect()
        defer { c.close() }
        let clean = try export(.events, period)
        for (position, path, value) in [(Int64(1_507), "{status}", "6"),       // just after the period
                                        (Int64(2), "{status}", "5"),           // before it, folded into X-1's status
                                        (Int64(1_200), "{amount}", "\"9.00\"")] {   // in it, in the second batch
            let original = try c.query("SELECT payload::text AS p FROM ledger.events WHERE position = $1", [.int(position)]).string(0, "p")
            try TamperedLogTests.tamper(c, position: position, path: path, value: value)
            let error = #expect(throws: ChainBreak.self, "tampered at \(position)") { _ = try export(.events, period) }
            #expect(error?.position == position, "\(String(describing: error))")
            let small = #expect(throws: ChainBreak.self, "with one kept state, too") { _ = try export(.events, period, cachedStreams: 1) }
            #expect(small?.position == position)
            // The content put back as it was: the same bytes again.
            try c.query("SET session_replication_role = replica")
            try c.query("UPDATE ledger.events SET payload = $2::jsonb WHERE position = $1", [.int(position), .text(original)])
            try c.query("SET session_replication_role = origin")
            #expect(try export(.events, period) == clean, "restored at \(position)")
        }
    }

    @Test("events: an event inside the period's run but recorded outside it is checked in the chain, not shown")
    func recordedOutsideInsideTheRun() throws {
        let period = try ledger()
        let c = try db.connect()
        defer { c.close() }
        // Recording times are not strictly in ledger order (an append may take its time
        // before the lock): here position 1,000 says it was recorded after the period, its
        // hash and every one after it recomputed so that the chain holds.
        try c.query("SET session_replication_role = replica")
        try c.query("UPDATE ledger.events SET recorded_at = ledger.from_micros($2) WHERE position = $1",
                    [.int(1_000), .int(period.to.microseconds + 1_000_000)])
        for p in Int64(1_000)...1_507 { try ChainRewrite.rehash(p, on: c) }
        try c.query("SET session_replication_role = origin")
        let rows = ExportTests.csvRows(try export(.events, period)).dropFirst()
        #expect(rows.map { Int64($0[0]) ?? 0 } == Array(5...999) + Array(1_001...1_506), "all but 1,000, in ledger order")
        #expect(try export(.events, period, cachedStreams: 1) == (try export(.events, period)))
        // Its content altered too: the run's check still sees it.
        try TamperedLogTests.tamper(c, position: 1_000, path: "{amount}", value: "\"2.00\"")
        let error = #expect(throws: ChainBreak.self) { _ = try export(.events, period) }
        #expect(error?.position == 1_000, "\(String(describing: error))")
    }

    @Test("orders: the same bytes again, and the same when every row must be derived from its state (another rendering version)")
    func ordersAgain() throws {
        let period = try ledger()
        let c = try db.connect()
        defer { c.close() }
        // X-1 was paid before the period; orders paid in it: none but those the test pays here.
        try TestWrites(pool: db.pool(size: 1)).registerAndPay("X-2")
        try TestWrites(pool: db.pool(size: 1)).registerAndPay("X-3")
        try observe("X-3", status: 4)
        let all = (from: Timestamp(microseconds: period.from.microseconds - 3_600_000_000), to: Timestamp.now())
        Self.pause()
        for format in ExportFormat.allCases {
            let first = try export(.orders, all, format: format)
            #expect(try export(.orders, all, format: format) == first, "\(format): a closed period gives the same bytes")
            try c.query("UPDATE ledger.orders SET document_version = document_version - 1")
            #expect(try export(.orders, all, format: format) == first, "\(format): derived from the states, the same bytes")
            try c.query("UPDATE ledger.orders SET document_version = document_version + 1")
        }
        let rows = ExportTests.csvRows(try export(.orders, all)).dropFirst()
        #expect(rows.map { $0[0] } == ["X-1", "X-0", "X-2", "X-3"], "by first paid time: \(rows)")
        // A period that ended before X-0's last event shows it as it stood then: a replay of
        // the events recorded before its end, as the oracle folds them here.
        let ended = ExportTests.csvRows(try export(.orders, (all.from, period.to))).dropFirst()
        #expect(ended.map { $0[0] } == ["X-1", "X-0"], "\(ended)")
        for row in ended {
            let no = try MerchantOrderNo(row[0])
            let known = try EventStore().read(stream: no.stream, on: c).filter { $0.recordedAt.microseconds < period.to.microseconds }
            let state = OrderState.replay(no, try known.map(EventMapping.recorded))
            #expect(row[3] == String(state.status.rawValue) && row[16] == String(state.lastPosition ?? 0), "\(row)")
        }
        #expect(ended.last?[16] == "5", "X-0 as of position 5, not its event after the period")
    }
}
