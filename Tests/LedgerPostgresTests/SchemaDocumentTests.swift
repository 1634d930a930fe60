import Foundation
import LedgerPostgres
import LedgerTestSupport
import Testing

/// docs/schema.sql is what an auditor reads to see the whole schema; these keep it,
/// and the one definition of the append lock's key, true to the migrations.
@Suite("The schema an auditor reads")
struct SchemaDocumentTests {
    static let root = URL(fileURLWithPath: TestDatabase.migrationsDirectory).deletingLastPathComponent()

    @Test("docs/schema.sql is the schema a freshly migrated database holds, as Ops/schema prints it")
    func schemaDocumentIsCurrent() throws {
        let db = try TestDatabase.create("schema")
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/bash")
        process.arguments = [Self.root.appendingPathComponent("Ops/schema").path, "--stdout", db.url]
        let output = Pipe(), errors = Pipe()
        process.standardOutput = output
        process.standardError = errors
        try process.run()
        let printed = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        let complaint = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        try #require(process.terminationStatus == 0, "Ops/schema --stdout failed: \(complaint)")

        let document = try String(contentsOf: Self.root.appendingPathComponent("docs/schema.sql"), encoding: .utf8)
        if printed != document {
            let now = printed.split(separator: "\n", omittingEmptySubsequences: false)
            let written = document.split(separator: "\n", omittingEmptySubsequences: false)
            let line = (0..<min(now.count, written.count)).first { now[$0] != written[$0] } ?? min(now.count, written.count)
            Issue.record("""
                docs/schema.sql is not the schema the migrations make: run Ops/schema and commit docs/schema.sql. \
                First difference at line \(line + 1): the migrations make \
                "\(line < now.count ? String(now[line]) : "(end of file)")", the file says \
                "\(line < written.count ? String(written[line]) : "(end of file)")"
                """)
        }
    }

    @Test("the append lock's key is one number: ledger.append_lock_key() is AppendLock.key")
    func lockKeyAgrees() throws {
        let db = try TestDatabase.create("lockkey")
        let c = try db.connect()
        #expect(try c.query("SELECT ledger.append_lock_key() AS key").int64(0, "key") == AppendLock.key)
        let writers = try c.query("""
            SELECT p.proname FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
             WHERE n.nspname = 'ledger' AND p.prosrc LIKE '%' || $1 || '%' ORDER BY 1
            """, [.text(String(AppendLock.key))])
        #expect((0..<writers.count).map { try? writers.string($0, "proname") } == ["append_lock_key"],
                "only ledger.append_lock_key() writes the key out")
    }

    @Test("every SQL append path waits for the lock AppendLock.key names",
          arguments: [
            "SELECT * FROM ledger.append_prepare('{k}'::text[], '{order-K}'::text[])",
            "SELECT * FROM ledger.append_prepare('{k}'::text[], '{order-K}'::text[], '{}'::text[], NULL)",
            "SELECT * FROM ledger.append_events('\(Self.item(expectedVersion: false))'::jsonb)",
            "SELECT * FROM ledger.append_events('\(Self.item(expectedVersion: true))'::jsonb)",
          ])
    func appendsTakeTheLock(sql: String) throws {
        let db = try TestDatabase.create("lockwait")
        let holder = try db.connect(), appender = try db.connect()
        try holder.transaction { h in
            try h.query("SELECT pg_advisory_xact_lock($1::bigint)", [.int(AppendLock.key)])
            #expect {
                try appender.transaction { a in
                    try a.query("SET LOCAL lock_timeout = '200ms'")
                    try a.query(sql)
                }
            } throws: { error in
                guard case PostgresError.server(let state, _, _, _) = error else { return false }
                return state == "55P03"   // lock_not_available: it waited for the holder
            }
        }
        try appender.query(sql)   // and goes through once the lock is free
    }

    static func item(expectedVersion: Bool) -> String {
        """
        [{"stream":"order-K","type":"StatusObserved","source":"webhook","payload":{},"raw":null,"metadata":{},\
        "key":"k","observedAtMicros":"0"\(expectedVersion ? ",\"expectedVersion\":0" : "")}]
        """
    }
}
