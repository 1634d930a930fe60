import LedgerCore
import LedgerPostgres
import LedgerService
import LedgerTestSupport
import Testing

/// `ledger verify` merges a scan of the log in stream order with the order rows read a
/// page at a time: every row meets its stream, and the ones that have none are named.
@Suite("verify's scan meets every order row")
struct VerifyScanTests {
    let db: TestDatabase
    init() throws { db = try TestDatabase.create("verifyscan") }

    func differences() throws -> [String: [String]] {
        let c = try db.connect()
        defer { c.close() }
        var found: [String: [String]] = [:]
        let report = try Verification().run(on: c, each: { d in
            #expect(found[d.subject] == nil, "\(d.subject) is named once")
            found[d.subject] = d.fields
        })
        #expect(report.summary.total == found.count)
        return found
    }

    @Test("a run of deleted events is named by its first position, as the walk from genesis names it; a single one by its own")
    func missingRunNamedFromItsStart() throws {
        for no in ["G-1", "G-2", "G-3", "G-4"] { try TestWrites(pool: db.pool(size: 1)).registerAndPay(no) }   // positions 1-8
        let c = try db.connect()
        defer { c.close() }
        try c.query("SET session_replication_role = replica")
        try c.query("DELETE FROM ledger.events WHERE position BETWEEN 3 AND 5")
        try c.query("SET session_replication_role = origin")
        let report = try Verification().run(on: c)
        guard case .broken(let position, let reason) = report.chain else {
            Issue.record("verify passed a log with positions 3 to 5 deleted")
            return
        }
        #expect(position == 3 && reason == "events 3 to 5 are missing (next stored position is 6)", "\(reason)")
        guard case .broken(let walked, _) = try ChainVerifier().verify(on: c) else { return }
        #expect(walked == position)
        try c.query("SET session_replication_role = replica")
        try c.query("DELETE FROM ledger.events WHERE position = 1")
        try c.query("SET session_replication_role = origin")
        guard case .broken(let single, let why) = try Verification().run(on: c).chain else { return }
        #expect(single == 1 && why == "event 1 is missing (next stored position is 2)", "\(why)")
    }

    @Test("rows without events before, between and after the streams, and a stream without its row, are each named once")
    func rowsAndStreamsWithoutEachOther() throws {
        for no in ["M-1", "M-3", "M-5", "M-7"] { try TestWrites(pool: db.pool(size: 1)).registerAndPay(no) }
        #expect(try differences().isEmpty)
        let c = try db.connect()
        defer { c.close() }
        for copy in ["M-0", "M-4", "M-9"] {
            try c.query("""
                INSERT INTO ledger.orders SELECT $1, provider, status, status_name, paid, attention, late_payment, refunded,
                       expected_amount, paid_amount, asset, fiat_currency, fiat_amount, provider_order_id, tx_hash,
                       external_customer_id, created_at, updated_at, paid_at, paid_recorded_at, event_count, last_position,
                       state, document, document_masked, document_version
                  FROM ledger.orders WHERE merchant_order_no = 'M-3'
                """, [.text(copy)])
        }
        try c.query("DELETE FROM ledger.orders WHERE merchant_order_no = 'M-5'")
        try c.query("UPDATE ledger.orders SET paid_amount = '39.99' WHERE merchant_order_no = 'M-7'")
        #expect(try differences() == [
            "order M-0": ["(no events)"], "order M-4": ["(no events)"], "order M-9": ["(no events)"],
            "order M-5": ["(no row)"], "order M-7": ["paid_amount"],
        ])
    }

    @Test("the masked document is checked as it is served: stored apart when the order holds an e-mail address, else the document itself")
    func maskedDocuments() throws {
        let committer = GroupCommitter(pool: try db.pool(size: 1), projector: OrderProjection())
        for (no, customer) in [("E-1", "ann@example.com"), ("E-2", "ann@example.com"), ("E-3", "cust-7")] {
            let registration = try OrderRequests.registration(
                body: Array(#"{"merchantOrderNo":"\#(no)","provider":"web3","amount":"40.00","asset":"USDT","externalCustomerId":"\#(customer)"}"#.utf8),
                receivedAt: Timestamp.now())
            _ = try committer.append([EventMapping.newEvent(.registered(registration), raw: nil,
                                                            receipt: Receipt(requestID: "test", verifiedBy: "token:test"))])
        }
        committer.shutdown()
        let c = try db.connect()
        defer { c.close() }
        #expect(try c.query("SELECT count(*) AS n FROM ledger.orders WHERE document_masked IS NOT NULL").int64(0, "n") == 2)
        #expect(try differences().isEmpty)
        // The masked document edited; the masked document dropped, so the unmasked one would be served masked.
        try c.query("UPDATE ledger.orders SET document_masked = replace(document_masked, '\"40.00\"', '\"41.00\"') WHERE merchant_order_no = 'E-1'")
        try c.query("UPDATE ledger.orders SET document_masked = NULL WHERE merchant_order_no = 'E-2'")
        // An order without one: its document edited is what is served both ways.
        try c.query("UPDATE ledger.orders SET document = replace(document, '\"40.00\"', '\"41.00\"') WHERE merchant_order_no = 'E-3'")
        #expect(try differences() == [
            "order E-1": ["document_masked"], "order E-2": ["document_masked"], "order E-3": ["document", "document_masked"],
        ])
    }
}
