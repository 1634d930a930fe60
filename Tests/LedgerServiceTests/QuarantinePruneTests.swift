import Foundation
import LedgerCore
import LedgerPostgres
@testable import LedgerService
import Testing

@Suite("ledger quarantine prune")
final class QuarantinePruneTests {
    let ledger: LedgerFixture
    init() throws { ledger = try .start("qprune") }
    deinit { ledger.stop() }

    var env: [String: String] { ["DATABASE_URL": ledger.databaseURL] }
    func size() throws -> Int64 { try ledger.count("SELECT pg_total_relation_size('ledger.quarantine') AS n") }

    @Test("deletes the deliveries received before the time, keeps the later ones, and gives the space back")
    func prune() throws {
        for i in 0..<150 {
            // Random padding: the raw bodies must not compress away in TOAST.
            let padding = Hex.encode(Crypto.randomBytes(2_000))
            let body = LedgerFixture.web3Body("QP-\(i)", status: 3, extra: #","pad":"\#(padding)""#)
            #expect(try ledger.sendWeb3(body, key: "forged").status == 401)
        }
        _ = try ledger.query("UPDATE ledger.quarantine SET received_at = '2026-01-01T00:00:00Z' WHERE id IN (SELECT id FROM ledger.quarantine ORDER BY id LIMIT 140)")
        let before = try size()
        let stored = try ledger.count("""
            SELECT coalesce(sum(pg_column_size(q.*)), 0) AS n FROM ledger.quarantine q WHERE received_at < '2026-06-01T00:00:00Z'
            """)
        let run = CLIRun()
        #expect(run(["quarantine", "prune", "--before", "2026-06-01"], env: env) == 0, "\(run.errorLines)")
        #expect(run.output.first?.hasPrefix("deleted 140 rejected deliveries received before 2026-06-01T00:00:00Z") == true, "\(run.output)")
        #expect(try ledger.count("SELECT count(*) AS n FROM ledger.quarantine") == 10)
        let after = try size()
        // A DELETE alone leaves the table as large as it was; the rewrite gives space back.
        // (How much depends on the cluster: TOAST compression, pages, concurrent sessions.)
        #expect(stored > 14_000 && after < before,
                "the table went from \(before) to \(after) bytes; the deleted rows held \(stored)")
    }

    @Test("a missing or future --before, or another action, is one line on stderr and exit 64; nothing is deleted")
    func badArguments() throws {
        #expect(try ledger.sendWeb3(LedgerFixture.web3Body("QB-1", status: 3), key: "forged").status == 401)
        let future = Timestamp(seconds: Timestamp.now().seconds + 3_600).rfc3339
        for arguments in [["quarantine", "prune"], ["quarantine", "prune", "--before", future], ["quarantine", "list"],
                          ["quarantine", "prune", "--before", "soon"], ["quarantine", "prune", "--before", "2026-06-01T00:00:00"]] {
            let run = CLIRun()
            #expect(run(arguments, env: env) == 64, "\(arguments)")
            #expect(run.errorLines.count == 1 && run.output.isEmpty, "\(arguments): \(run.errorLines)")
        }
        #expect(try ledger.count("SELECT count(*) AS n FROM ledger.quarantine") == 1)
    }
}
