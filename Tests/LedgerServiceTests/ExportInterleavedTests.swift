import Foundation
import LedgerCore
import LedgerPostgres
@testable import LedgerService
import LedgerTestSupport
import Testing

/// An events export's `status_after` on ledgers whose orders' events lie far apart (the
/// states it drops set aside and read back), and the chain around the period's first event.
extension ExportRereadTests {
    @Test("events of orders whose events lie far apart, runs of new orders between: any number of kept states, with states set aside and read back, gives the same bytes",
          arguments: [1 as UInt64, 2, 3])
    func interleavedWithRunsOfNewOrders(seed: UInt64) throws {
        var rng = HostileJSON.Seeded(seed: seed)
        let from = Timestamp.now()
        Self.pause()
        var orders = (0..<20).map { "N-\($0)" }
        try register(orders)
        for _ in 0..<240 {
            let no = orders[Int.random(in: 0..<orders.count, using: &rng)], status = Int.random(in: 1...6, using: &rng)
            if Int.random(in: 0..<12, using: &rng) == 0 {
                // A run of new orders: kept states dropped while none came back, so none set aside.
                let new = (0..<12).map { "N-\(orders.count + $0)" }
                try register(new)
                orders += new
            } else {
                try observeAll([no], status: status)
            }
        }
        Self.pause()
        let period = (from: from, to: Timestamp.now())
        let everyState = try export(.events, period, cachedStreams: 10_000)
        let c = try db.connect()
        defer { c.close() }
        let events = try c.query("SELECT count(*) AS n FROM ledger.events").int64(0, "n")   // redeliveries were not stored twice
        #expect(ExportTests.csvRows(everyState).count == 1 + Int(events) && events > 150)
        var readBack = 0
        for kept in [1, 2, 4, 16] {
            let session = ExportSession(kind: .events, from: period.from, to: period.to, format: .csv,
                                        connection: try db.connect(), cachedStreams: kept)
            var bytes = [UInt8]()
            _ = try session.run(write: { bytes += $0 })
            #expect(bytes == everyState, "\(kept) kept states, \(session.statesSetAside) set aside and read back")
            readBack += session.statesSetAside.read
        }
        #expect(readBack > 0, "states were set aside and read back")
    }

    @Test("events: an event written into another order's stream is in no order's history: its status_after is blank, and no other row's depends on how many states are kept")
    func foreignStreamEvents() throws {
        let from = Timestamp.now()
        Self.pause()
        let orders = (0..<6).map { "FS-\($0)" }
        try register(orders)
        try observeAll(orders, status: 1)
        // Someone with the database's keys writes FS-1's status into FS-0's stream, and FS-2's into FS-3's.
        let c = try db.connect()
        defer { c.close() }
        for (named, stream, status) in [("FS-1", "FS-0", "3"), ("FS-2", "FS-3", "5")] {
            let observation = try QueryObservation.map(provider: "acme", merchantOrderNo: MerchantOrderNo(named),
                                                       response: .object([("status", .number(status))]),
                                                       observedAt: nil, receivedAt: Timestamp.now())
            var foreign = EventMapping.newEvent(observation, raw: nil, receipt: Receipt(requestID: "test", verifiedBy: "token:test"))
            foreign.stream = "order-" + stream
            _ = try c.transaction { try EventStore().append([foreign], on: $0) }
        }
        for round in 0..<3 {
            try register((0..<3).map { "FS-new-\(round)-\($0)" })   // orders between, to push kept states out
            try observeAll(orders, status: 2)
        }
        Self.pause()
        let period = (from: from, to: Timestamp.now())
        let everyState = try export(.events, period, cachedStreams: 10_000)
        let rows = ExportTests.csvRows(everyState).dropFirst()
        let foreign = rows.filter { $0[3] != "order-" + $0[4] }
        #expect(foreign.count == 2 && foreign.allSatisfy { $0[9] == "" }, "\(foreign)")
        #expect(rows.filter { $0[4] == "FS-1" }.last?[9] == "2", "FS-1's own stream: the foreign paid status is not in it")
        for kept in [1, 2, 3, 4, 16] {
            #expect(try export(.events, period, cachedStreams: kept) == everyState, "\(kept) kept states")
        }
    }

    /// Orders registered together through the projection, as the service registers them.
    func register(_ orders: [String]) throws {
        let pool = db.pool(size: 1)
        let committer = GroupCommitter(pool: pool, projector: OrderProjection())
        defer { committer.shutdown(); pool.close() }
        let now = Timestamp.now(), receipt = Receipt(requestID: "test", verifiedBy: "token:test")
        _ = try committer.append(try orders.map { no in
            let body = Array(#"{"merchantOrderNo":"\#(no)","provider":"web3","amount":"1.00","asset":"USDT"}"#.utf8)
            return EventMapping.newEvent(.registered(try OrderRequests.registration(body: body, receivedAt: now)), raw: nil, receipt: receipt)
        })
    }

    @Test("events: the event just before the period anchors the chain and is not folded unchecked: its content altered, the export stops naming it")
    func tamperedAnchor() throws {
        try TestWrites(pool: db.pool(size: 1)).registrations(1)                           // P-00000 at 1
        Self.pause()
        let from = Timestamp.now()
        try observe("P-00000", status: 3)                                                 // 2, in the period
        Self.pause()
        let period = (from: from, to: Timestamp.now())
        let clean = try export(.events, period)
        #expect(ExportTests.csvRows(clean).dropFirst().map { $0[9] } == ["3"])
        let c = try db.connect()
        defer { c.close() }
        try TamperedLogTests.tamper(c, position: 1, path: "{amount}", value: "\"9.00\"")
        for kept in [1, ExportSession.defaultCachedStreams] {
            let error = #expect(throws: ChainBreak.self) { _ = try export(.events, period, cachedStreams: kept) }
            #expect(error?.position == 1, "\(String(describing: error))")
        }
    }
}
