import LedgerCore
import LedgerPostgres
import LedgerTestSupport
import Testing

@Suite("The event log cannot be rewritten")
struct ImmutabilityTests {
    let db: TestDatabase
    init() throws {
        db = try TestDatabase.create("immutable")
        let c = try db.connect()
        _ = try c.transaction { try EventStore().append((1...5).map { sampleEvent(key: "i\($0)") }, on: $0) }
    }

    @Test("UPDATE, DELETE and TRUNCATE fail for the owner and for the service role",
          arguments: ["UPDATE ledger.events SET type = 'X'", "DELETE FROM ledger.events",
                      "TRUNCATE ledger.events CASCADE"])
    func refused(statement: String) throws {
        let owner = try db.connect()
        // The error carries the server's SQLSTATE and message.
        #expect {
            try owner.query(statement)
        } throws: { error in
            guard let e = error as? PostgresError else { return false }
            return e.sqlState == "42501" && e.description.contains("append-only")
        }
        let service = try db.connect()
        try service.query("SET ROLE ledger_service")
        #expect(throws: PostgresError.self) { try service.query(statement) }
        #expect(try count("SELECT count(*) AS n FROM ledger.events", on: owner) == 5)
    }

    @Test("the service role may insert and select events but not alter the table")
    func serviceRolePrivileges() throws {
        let service = try db.connect()
        try service.query("SET ROLE ledger_service")
        _ = try service.transaction { try EventStore().append([sampleEvent(key: "svc")], on: $0) }
        #expect(try count("SELECT count(*) AS n FROM ledger.events", on: service) == 6)
        #expect(throws: PostgresError.self) { try service.query("ALTER TABLE ledger.events DISABLE TRIGGER ALL") }
    }

    @Test("a one-byte change made by a superuser with triggers disabled is found, naming its position")
    func tamperDetected() throws {
        let c = try db.connect()
        #expect(try ChainVerifier().verify(on: c) == .intact(events: 5, head: 5))
        try c.query("SET session_replication_role = replica")   // superuser: triggers off
        try c.query("UPDATE ledger.events SET raw = set_byte(raw, 0, get_byte(raw, 0) # 1) WHERE position = 3")
        try c.query("SET session_replication_role = origin")
        guard case .broken(let position, let reason) = try ChainVerifier().verify(on: c) else {
            Issue.record("tampering went unnoticed"); return
        }
        #expect(position == 3)
        #expect(reason.contains("3"))
    }

    @Test("a deleted event is found as a missing position")
    func deletionDetected() throws {
        let c = try db.connect()
        try c.query("SET session_replication_role = replica")
        try c.query("DELETE FROM ledger.events WHERE position = 4")
        try c.query("SET session_replication_role = origin")
        #expect(try ChainVerifier().verify(on: c) == .broken(position: 4, reason: "event 4 is missing (next stored position is 5)"))
    }
}
