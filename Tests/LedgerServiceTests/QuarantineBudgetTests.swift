import LedgerAPI
import LedgerCore
import LedgerObservability
import LedgerPostgres
@testable import LedgerService
import LedgerTestSupport
import Testing

/// A flood of forged deliveries must not fill the disk: past its budget the
/// quarantine counts rejections without keeping them.
@Suite("Quarantine budget and per-source limit")
struct QuarantineBudgetTests {
    static func forged(_ n: Int, from address: String = "192.0.2.7") -> Delivery {
        Delivery(headers: ["x-pay-signature": "00", "x-pay-timestamp": "1"],
                 body: Array(#"{"merchantOrderNo":"SO-\#(n)"}"#.utf8), requestID: "r\(n)", remote: address,
                 path: "/v1/webhooks/web3")
    }

    func quarantine(_ db: TestDatabase, maxBytes: Int64) -> (Quarantine, Counter, Counter, ConnectionPool) {
        let registry = MetricsRegistry()
        let rejected = registry.counter("rejected", help: "", labels: ["reason"])
        let full = registry.counter("full", help: "")
        let pool = db.pool(size: 2)
        return (Quarantine(pool: pool, rejected: rejected, logger: .disabled,
                           budget: QuarantineBudget(maxBytes: maxBytes, dropped: full, recheck: .zero),
                           sources: QuarantineSourceLimit(perMinute: 1000),
                           rateLimited: registry.counter("limited", help: "")), rejected, full, pool)
    }

    @Test("within budget a rejected delivery is kept; past it, it is counted as rejected and as not kept")
    func budget() throws {
        let db = try TestDatabase.create("qbudget")
        let c = try db.connect()
        let rows = "SELECT count(*) AS n FROM ledger.quarantine"

        let (roomy, roomyRejected, roomyFull, roomyPool) = quarantine(db, maxBytes: 1 << 30)
        defer { roomyPool.close() }
        roomy.keep(Self.forged(1), provider: "web3", error: .badSignature)
        #expect(try c.query(rows).int64(0, "n") == 1)
        #expect(roomyRejected.value("bad_signature") == 1)
        #expect(roomyFull.value() == 0)

        // A budget smaller than the table already is: nothing more is kept.
        let (full, fullRejected, fullDropped, fullPool) = quarantine(db, maxBytes: 1)
        defer { fullPool.close() }
        for n in 2...4 { full.keep(Self.forged(n), provider: "web3", error: .badSignature) }
        #expect(try c.query(rows).int64(0, "n") == 1)
        #expect(fullRejected.value("bad_signature") == 3)
        #expect(fullDropped.value() == 3)
    }

    @Test("while a prune holds the table's lock, a rejected delivery is counted as not kept within a fraction of a second, not held on a pooled connection")
    func lockedByPrune() throws {
        let db = try TestDatabase.create("qlocked")
        let (quarantine, _, dropped, pool) = quarantine(db, maxBytes: 1 << 30)
        defer { pool.close() }
        let holder = try db.connect()
        defer { holder.close() }
        try holder.beginSpanningTransaction()
        try holder.query("LOCK TABLE ledger.quarantine IN ACCESS EXCLUSIVE MODE")   // as VACUUM FULL holds it
        let began = ContinuousClock.now
        quarantine.keep(Self.forged(1), provider: "web3", error: .badSignature)
        #expect(ContinuousClock.now - began < .seconds(2), "waited \(ContinuousClock.now - began)")
        #expect(dropped.value() == 1)
        try holder.endSpanningTransaction()
        quarantine.keep(Self.forged(2), provider: "web3", error: .badSignature)
        #expect(try holder.query("SELECT count(*) AS n FROM ledger.quarantine").int64(0, "n") == 1, "kept once the lock is gone")
    }

    @Test("rows kept between two measurements of the table count against the budget")
    func keptBytesCount() throws {
        let db = try TestDatabase.create("qcounted")
        let c = try db.connect()
        defer { c.close() }
        let size = try QuarantineStore().sizeBytes(on: c)
        let budget = QuarantineBudget(maxBytes: size + 10_000, dropped: MetricsRegistry().counter("d", help: ""), recheck: .seconds(3600))
        #expect(try budget.allows(on: c))
        budget.kept(bytes: 10_000)
        #expect(try !budget.allows(on: c), "the measured size plus what was kept since is the budget")
    }

    @Test("one address keeps at most its per-minute share; others still have theirs; every rejection is counted")
    func perSource() throws {
        let db = try TestDatabase.create("qsource")
        let c = try db.connect()
        let registry = MetricsRegistry()
        let rejected = registry.counter("rejected", help: "", labels: ["reason"])
        let limited = registry.counter("limited", help: "")
        let pool = db.pool(size: 2)
        defer { pool.close() }
        let quarantine = Quarantine(pool: pool, rejected: rejected, logger: .disabled,
                                    budget: QuarantineBudget(maxBytes: 1 << 30, dropped: registry.counter("full", help: "")),
                                    sources: QuarantineSourceLimit(perMinute: 3), rateLimited: limited)
        for n in 1...10 { quarantine.keep(Self.forged(n, from: "198.51.100.1"), provider: "web3", error: .badSignature) }
        quarantine.keep(Self.forged(11, from: "198.51.100.2"), provider: "web3", error: .badSignature)
        let kept = try c.query("SELECT remote_address, count(*) AS n FROM ledger.quarantine GROUP BY 1 ORDER BY 1")
        #expect(kept.count == 2)
        #expect(try kept.string(0, "remote_address") == "198.51.100.1" && kept.int64(0, "n") == 3)
        #expect(try kept.string(1, "remote_address") == "198.51.100.2" && kept.int64(1, "n") == 1)
        #expect(rejected.value("bad_signature") == 11)
        #expect(limited.value() == 7)
    }

    @Test("the per-source bucket: a burst of its size, then its rate; memory bounded by the number of sources")
    func sourceBucket() {
        let start = ContinuousClock.now
        let limit = QuarantineSourceLimit(perMinute: 60, maxSources: 2)
        #expect((0..<60).allSatisfy { _ in limit.allows("a", now: start) })
        #expect(!limit.allows("a", now: start))
        #expect(!limit.allows("a", now: start + .milliseconds(900)))   // less than one second: no token yet
        #expect(limit.allows("a", now: start + .seconds(2)))            // one a second
        #expect(limit.allows("a", now: start + .seconds(2)))
        #expect(!limit.allows("a", now: start + .seconds(2)))
        #expect((0..<60).allSatisfy { _ in limit.allows("b", now: start + .seconds(2)) })
        // Two active sources tracked: a third is not kept until a bucket has refilled.
        #expect(!limit.allows("c", now: start + .seconds(3)))
        #expect(limit.trackedSources == 2)
        #expect(limit.allows("c", now: start + .seconds(200)))           // a and b refilled and were forgotten
        #expect(limit.trackedSources == 1)
    }

    @Test("an IPv6 sender is one source per /64; IPv4 addresses are each their own")
    func sourceKeys() {
        #expect(QuarantineSourceLimit.source(of: "2001:db8:1:2::1") == QuarantineSourceLimit.source(of: "2001:db8:1:2:ffff::9"))
        #expect(QuarantineSourceLimit.source(of: "2001:db8:1:2::1") != QuarantineSourceLimit.source(of: "2001:db8:1:3::1"))
        #expect(QuarantineSourceLimit.source(of: "192.0.2.1") == "192.0.2.1")
        #expect(QuarantineSourceLimit.source(of: "unknown") == "unknown")
        let limit = QuarantineSourceLimit(perMinute: 2)
        #expect(limit.allows("2001:db8::1") && limit.allows("2001:db8::2"))
        #expect(!limit.allows("2001:db8::3"), "the third from one /64 within the minute")
        #expect(limit.allows("2001:db9::1"))
    }

    @Test("LEDGER_QUARANTINE_PER_SOURCE: 600 a minute by default, a bad value named")
    func perSourceConfiguration() throws {
        let base = ["DATABASE_URL": "postgresql://localhost/x"]
        #expect(try LedgerConfiguration.fromEnvironment(base).service.quarantinePerSourcePerMinute == 600)
        #expect(try LedgerConfiguration.fromEnvironment(base.merging(["LEDGER_QUARANTINE_PER_SOURCE": "7"]) { $1 })
            .service.quarantinePerSourcePerMinute == 7)
        #expect(throws: ConfigurationError.self) {
            try LedgerConfiguration.fromEnvironment(base.merging(["LEDGER_QUARANTINE_PER_SOURCE": "0"]) { $1 })
        }
    }

    @Test("LEDGER_QUARANTINE_MAX_BYTES: 1 GiB by default, a bad value named")
    func configuration() throws {
        let base = ["DATABASE_URL": "postgresql://localhost/x"]
        #expect(try LedgerConfiguration.fromEnvironment(base).service.quarantineMaxBytes == 1 << 30)
        #expect(try LedgerConfiguration.fromEnvironment(base.merging(["LEDGER_QUARANTINE_MAX_BYTES": "5000"]) { $1 })
            .service.quarantineMaxBytes == 5000)
        #expect(throws: ConfigurationError.self) {
            try LedgerConfiguration.fromEnvironment(base.merging(["LEDGER_QUARANTINE_MAX_BYTES": "lots"]) { $1 })
        }
    }
}
