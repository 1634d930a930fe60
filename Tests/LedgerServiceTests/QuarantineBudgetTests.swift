import LedgerCore
import LedgerHTTP
import LedgerPostgres
@testable import LedgerService
import LedgerTestSupport
import Testing

/// A flood of forged deliveries must not fill the disk: past its budget the
/// quarantine counts rejections without keeping them.
@Suite("Quarantine budget")
struct QuarantineBudgetTests {
    static func forged(_ n: Int) -> HTTPRequest {
        HTTPRequest(method: "POST", path: "/v1/webhooks/web3",
                    headers: ["x-pay-signature": "00", "x-pay-timestamp": "1"],
                    body: Array(#"{"merchantOrderNo":"SO-\#(n)"}"#.utf8), remoteAddress: "192.0.2.7", requestID: "r\(n)")
    }

    func quarantine(_ db: TestDatabase, maxBytes: Int64) -> (Quarantine, Counter, Counter, ConnectionPool) {
        let registry = MetricsRegistry()
        let rejected = registry.counter("rejected", help: "", labels: ["reason"])
        let full = registry.counter("full", help: "")
        let pool = db.pool(size: 2)
        return (Quarantine(pool: pool, rejected: rejected, logger: .disabled,
                           budget: QuarantineBudget(maxBytes: maxBytes, dropped: full, recheck: .zero)), rejected, full, pool)
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

    @Test("LEDGER_QUARANTINE_MAX_BYTES: 1 GiB by default, a bad value named")
    func configuration() throws {
        let base = ["DATABASE_URL": "postgresql://localhost/x"]
        #expect(try LedgerConfiguration.fromEnvironment(base).quarantineMaxBytes == 1 << 30)
        #expect(try LedgerConfiguration.fromEnvironment(base.merging(["LEDGER_QUARANTINE_MAX_BYTES": "5000"]) { $1 })
            .quarantineMaxBytes == 5000)
        #expect(throws: ConfigurationError.self) {
            try LedgerConfiguration.fromEnvironment(base.merging(["LEDGER_QUARANTINE_MAX_BYTES": "lots"]) { $1 })
        }
    }
}
