import Foundation
@testable import ledger
import LedgerCore
import LedgerPostgres
@testable import LedgerService
import LedgerTestSupport
import Synchronization
import Testing

@Suite("The ledger command")
struct CLITests {
    let db: TestDatabase
    var env: [String: String] { ["DATABASE_URL": db.url] }
    init() throws { db = try TestDatabase.create("cli") }

    @Test("an error whose message quotes text with line breaks (a query, a note) is still one line on stderr")
    func errorOnOneLine() {
        #expect(LedgerCLI.oneLine("swap gave up: pid 7 runs SELECT *\n  FROM ledger.orders\r\n WHERE x") ==
                "swap gave up: pid 7 runs SELECT * / FROM ledger.orders / WHERE x")
        #expect(LedgerCLI.oneLine("plain") == "plain")
        let run = CLIRun()
        var cli = LedgerCLI(environment: [:], executablePath: "/nonexistent/ledger")
        cli.extraCommands["multiline-failure"] = { _, _ in throw CLIError.failed("first\nsecond", exitCode: 1) }
        cli.errorOutput = { line in run.errors.withLock { $0.append(line) } }
        #expect(cli.run(["multiline-failure"]) == 1)
        #expect(run.errorLines == ["ledger: first / second"])
    }

    @Test("no command is a usage error: one line on stderr, nothing on stdout, exit 64; --help prints the usage")
    func noCommand() {
        let bare = CLIRun()
        #expect(bare([], env: env) == 64)
        #expect(bare.output.isEmpty && bare.errorLines.count == 1, "\(bare.output) \(bare.errorLines)")
        let help = CLIRun()
        #expect(help(["--help"], env: env) == 0)
        #expect(help.output.first?.hasPrefix("usage: ledger") == true && help.errorLines.isEmpty)
    }

    @Test("LEDGER_MIGRATIONS naming no folder is a configuration error: one line, exit 2")
    func migrationsFolderMissing() {
        let run = CLIRun()
        #expect(run(["migrate"], env: env.merging(["LEDGER_MIGRATIONS": "/nonexistent/Migrations"]) { _, b in b }) == 2)
        #expect(run.errorLines.count == 1 && run.errorLines[0].contains("/nonexistent/Migrations"), "\(run.errorLines)")
    }

    @Test("a stray word after a command that takes options only is a usage error, and nothing runs")
    func strayWords() throws {
        try TestWrites(pool: db.pool(size: 1)).registerAndPay("SW-1")
        for words in [["rebuild", "oops"], ["replay", "--order", "SW-1", "oops"], ["serve", "now"], ["migrate", "up"],
                      ["verify", "oops"], ["checkpoint", "now"], ["token", "list", "oops"],
                      ["token", "create", "--role", "support", "--name", "stray", "oops"]] {
            let run = CLIRun()
            #expect(run(words, env: env) == 64, "\(words)")
            #expect(run.output.isEmpty && run.errorLines.count == 1, "\(words): \(run.output) \(run.errorLines)")
            #expect(run.errorLines.first?.contains("oops") == true || run.errorLines.first?.contains(words.last!) == true, "\(run.errorLines)")
        }
    }

    @Test("without DATABASE_URL the private cluster whose port LEDGER_STATE holds is used; with none found, one clear line and exit 2")
    func defaultDatabase() throws {
        let port = try #require(URLComponents(string: db.url)?.port, "the test database's URL names no port: \(db.url)")
        let state = FileManager.default.temporaryDirectory.appendingPathComponent("ledger-state-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: state, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: state) }
        let found = CLIRun()
        try "\(port)\n".write(to: state.appendingPathComponent("port"), atomically: true, encoding: .utf8)
        #expect(found(["migrate", "--status"], env: ["LEDGER_STATE": state.path]) == 0, "\(found.errorLines)")
        try FileManager.default.removeItem(at: state.appendingPathComponent("port"))
        let missing = CLIRun()
        #expect(missing(["migrate", "--status"], env: ["LEDGER_STATE": state.path]) == 2)
        #expect(missing.errorLines.count == 1 && missing.errorLines[0].contains("DATABASE_URL"), "\(missing.errorLines)")
    }

    @Test("token create prints the token on its last line and stores only its hash")
    func tokenCreate() throws {
        let run = CLIRun()
        #expect(run(["token", "create", "--role", "support", "--name", "alice", "--ttl", "30d"], env: env) == 0)
        let token = try #require(run.output.last)
        #expect(token.hasPrefix("lgr_") && token.count == 68)
        let c = try db.connect()
        let stored = try c.query("SELECT encode(token_hash, 'hex') AS h FROM ledger.tokens WHERE name = 'alice'").string(0, "h")
        #expect(stored == Hex.encode(Crypto.sha256(Array(token.utf8))))
        #expect(try c.query("SELECT count(*) AS n FROM ledger.tokens WHERE encode(token_hash, 'escape') LIKE '%' || $1 || '%'",
                            [.text(token)]).int64(0, "n") == 0)
        #expect(try TokenIssuer().authenticate(token, now: .now(), on: c)?.role == "support")
    }

    @Test("token list shows tokens and revoke makes a token invalid")
    func listAndRevoke() throws {
        let run = CLIRun()
        #expect(run(["token", "create", "--role", "auditor", "--name", "bob"], env: env) == 0)
        let token = try #require(run.output.last)
        #expect(run(["token", "list"], env: env) == 0)
        #expect(run.output.contains { $0.hasPrefix("bob\tauditor\tactive") })
        #expect(run(["token", "revoke", "bob"], env: env) == 0)
        #expect(try TokenIssuer().authenticate(token, now: .now(), on: db.connect()) == nil)
        #expect(run(["token", "revoke", "bob"], env: env) == 1)
        #expect(run.errorLines.last?.contains("no active token") == true)
        // A revoked token's name stays its own: corrections name their token as the actor.
        #expect(run(["token", "create", "--role", "auditor", "--name", "bob"], env: env) == 1)
        #expect(run.errorLines.last?.contains("names are never reused, revoked ones included") == true)
    }

    @Test("a wrong role or a duplicate name is refused with one line and a non-zero exit")
    func badTokenRequests() throws {
        let run = CLIRun()
        #expect(run(["token", "create", "--role", "king", "--name", "x"], env: env) == 64)
        #expect(run(["token", "create", "--role", "support", "--name", "dup"], env: env) == 0)
        #expect(run(["token", "create", "--role", "support", "--name", "dup"], env: env) == 1)
        #expect(run.errorLines.count == 2)
    }

    @Test("an invalid DATABASE_URL or an unreachable server exits 2 with one clear line",
          arguments: ["postgresql://x@127.0.0.1:1/none", "host=127.0.0.1 port=notaport", "nonsense = = ="])
    func badDatabase(url: String) {
        let run = CLIRun()
        #expect(run(["verify"], env: ["DATABASE_URL": url]) == 2)
        #expect(run.errorLines.count == 1)
        #expect(run.errorLines.first?.hasPrefix("ledger: ") == true)
    }

    @Test("a DATABASE_URL libpq cannot read never shows its password: verify and serve exit 2 without it",
          arguments: ["postgresql://ledger:pa%zzword@127.0.0.1/ledger", "host=127.0.0.1 password=pa zzword",
                      "postgresql://ledger:pa%zzword@[::1/ledger", #"postgresql://ledger:pa"zz%word@127.0.0.1/ledger"#,
                      #"postgresql://ledger:pa"zzword@[::1]x/ledger"#,
                      // libpq reads these, then quotes a piece of the password as a host or a port.
                      "postgresql://ledger:pa@zzword@127.0.0.1/ledger", "postgresql://ledger:pa/zzword@127.0.0.1:5432/ledger",
                      // A '#' ends the authority for RFC 3986, not for libpq, which reads "pa#zz" as the port.
                      "postgresql://ledger:pa#zz/word@127.0.0.1:1/ledger", "postgresql://ledger:zzword@127.0.0.1/ledger?sslmode=bogus"])
    func unreadableURLHidesPassword(url: String) {
        for command in ["verify", "serve"] {
            let run = CLIRun()
            #expect(run([command], env: ["DATABASE_URL": url]) == 2, "\(command): \(run.errorLines)")
            #expect(run.errorLines.count == 1 && run.errorLines.allSatisfy { !$0.contains("zz") }, "\(command): \(run.errorLines)")
        }
    }

    @Test("an option given twice, or an argument that is not UTF-8, is one line on stderr and exit 64")
    func repeatedOptionsAndNonUTF8() throws {
        let run = CLIRun()
        #expect(run(["verify", "--checkpoints", "/missing", "--checkpoints", "/tmp"], env: env) == 64)
        #expect(run.errorLines.count == 1 && run.errorLines[0].contains("--checkpoints is given more than once"), "\(run.errorLines)")
        for value in ["abc", "0.001", "0", "1.5"] {
            let pace = CLIRun()
            #expect(pace(["rebuild", "--pace", value], env: ["DATABASE_URL": "postgresql://x@127.0.0.1:1/none"]) == 64,
                    "\(value): a usage mistake, told before the database is reached: \(pace.errorLines)")
            #expect(pace.errorLines.count == 1 && pace.errorLines[0].contains("from 0.01 to 1"), "\(pace.errorLines)")
        }
        // The executable itself, through a shell that can hand it bytes that are not UTF-8.
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("ledger-args-\(UUID().uuidString)").path
        let shell = Process()
        shell.executableURL = URL(fileURLWithPath: "/bin/sh")
        shell.arguments = ["-c", #""$0" keys generate --out "$1/$(printf 'k\377')""#, try ServeProcess.executable(), folder]
        let errors = Pipe()
        shell.standardError = errors
        shell.standardOutput = FileHandle.nullDevice
        try shell.run()
        shell.waitUntilExit()
        let text = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        #expect(shell.terminationStatus == 64 && text.split(separator: "\n").count == 1 && text.contains("not UTF-8"), "\(text)")
        #expect(!FileManager.default.fileExists(atPath: folder), "nothing was written")
    }

    @Test("migrate --status reports every migration applied")
    func migrateStatus() throws {
        let run = CLIRun()
        #expect(run(["migrate", "--status"], env: env) == 0)
        #expect(run.output.last == "up to date")
        #expect(run(["migrate"], env: env) == 0)
        #expect(run.output.last == "already up to date")
    }

    @Test("rebuild stops at an event it cannot read back, names its position, exits 1 and leaves the read models as they were")
    func rebuildRefusesUnreadableEvent() throws {
        try TestWrites(pool: db.pool(size: 1)).registerAndPay("RB-1")
        // Through the SQL append path, as someone with the database's keys could: a status
        // observation without a status, which no version of the ledger wrote.
        let c = try db.connect()
        let bad = try c.query("""
            SELECT position FROM ledger.append_events('[{"stream":"order-RB-2","type":"StatusObserved","source":"webhook",
              "payload":{"merchantOrderNo":"RB-2","provider":"web3"},"key":"rb-unreadable","observedAtMicros":"1764417600000000"}]'::jsonb)
            """).int64(0, "position")
        let before = try c.query("SELECT count(*) AS n FROM ledger.orders").int64(0, "n")
        let run = CLIRun()
        #expect(run(["rebuild"], env: env) == 1)
        #expect(run.errorLines.last?.contains("position \(bad)") == true, "\(run.errorLines)")
        #expect(try c.query("SELECT count(*) AS n FROM ledger.orders").int64(0, "n") == before, "the rebuild's transaction rolled back")
        #expect(try c.query("SELECT status FROM ledger.orders WHERE merchant_order_no = 'RB-1'").string(0, "status") == "3")
        #expect(run(["verify"], env: env) == 1)
    }

    @Test("verify passes on a clean ledger, finds a drifted read model, and rebuild repairs it")
    func verifyAndRebuild() throws {
        // Write through the real projection path: a registration and a paid webhook.
        try TestWrites(pool: db.pool(size: 1)).registerAndPay("V-1")
        // A live client signal with a payload out of jsonb's form must replay to the same state.
        try TestWrites(pool: db.pool(size: 1)).clientSignal("V-1")
        let run = CLIRun()
        #expect(run(["verify"], env: env) == 0)
        #expect(run.output.dropLast().last == "read models match a replay of the events", "\(run.output)")
        #expect(run.output.last?.hasPrefix("checked: 3 events, 1 streams, 0 notes, ") == true, "\(run.output)")

        let c = try db.connect()
        try c.query("UPDATE ledger.orders SET state = jsonb_set(state::jsonb, '{observations}', '[]')::text WHERE merchant_order_no = 'V-1'")
        #expect(run(["verify"], env: env) == 1)
        #expect(run.errorLines.last?.contains("V-1") == true)

        #expect(run(["rebuild"], env: env) == 0)
        #expect(run(["verify"], env: env) == 0)
        #expect(try c.query("SELECT status FROM ledger.orders WHERE merchant_order_no = 'V-1'").string(0, "status") == "3")
    }

    @Test("verify finds a stored response document that differs from the replayed state, and rebuild repairs it")
    func verifyDocuments() throws {
        try TestWrites(pool: db.pool(size: 1)).registerAndPay("D-1")
        let run = CLIRun()
        #expect(run(["verify"], env: env) == 0)
        let c = try db.connect()
        try c.query("UPDATE ledger.orders SET document = replace(document, '\"paid\":true', '\"paid\":false') WHERE merchant_order_no = 'D-1'")
        #expect(run(["verify"], env: env) == 1)
        #expect(run.errorLines.contains { $0.contains("order D-1: document, document_masked differ") }, "\(run.errorLines)")
        #expect(run(["rebuild"], env: env) == 0)
        #expect(run(["verify"], env: env) == 0)
    }

    @Test("verify compares every column lists filter on, and the enrollments; rebuild repairs both")
    func verifyColumnsAndEnrollments() throws {
        try TestWrites(pool: db.pool(size: 1)).registerAndPay("C-1")
        try TestWrites(pool: db.pool(size: 1)).enrollment("E-1")
        let run = CLIRun()
        #expect(run(["verify"], env: env) == 0, "\(run.errorLines)")
        let c = try db.connect()
        try c.query("UPDATE ledger.orders SET paid = false, attention = true WHERE merchant_order_no = 'C-1'")
        #expect(run(["verify"], env: env) == 1)
        #expect(run.errorLines.last?.contains("order C-1: paid, attention differ") == true, "\(run.errorLines)")
        try c.query("UPDATE ledger.orders SET paid = true, attention = false WHERE merchant_order_no = 'C-1'")
        #expect(run(["verify"], env: env) == 0, "\(run.errorLines)")
        try c.query("UPDATE ledger.enrollments SET phase = 'tampered' WHERE enrollment_ref = 'E-1'")
        #expect(run(["verify"], env: env) == 1)
        #expect(run.errorLines.last?.contains("enrollment E-1: phase differ") == true, "\(run.errorLines)")
        // Each member of the state and each column, named: the state's members as jsonb values.
        try c.query("""
            UPDATE ledger.enrollments SET phase = state->>'phase', updated_at = updated_at - interval '1 hour',
                   state = state || '{"intentId": "pi_forged", "bankAccountAdded": true}'
             WHERE enrollment_ref = 'E-1'
            """)
        #expect(run(["verify"], env: env) == 1)
        #expect(run.output.contains("difference: enrollment E-1: updated_at, state.bankAccountAdded, state.intentId differ from a replay of its events (the read model differs)"),
                "\(run.output)")
        #expect(run.output.contains("  state.intentId: 1 (enrollment E-1)"), "\(run.output)")
        try c.query("UPDATE ledger.enrollments SET state = '[1]' WHERE enrollment_ref = 'E-1'")
        #expect(run(["verify"], env: env) == 1)
        #expect(run.output.contains { $0.hasPrefix("difference: enrollment E-1: updated_at, state.bankAccountAdded, state.enrollmentRef") }, "\(run.output)")
        try c.query("DELETE FROM ledger.enrollments")
        #expect(run(["verify"], env: env) == 1)
        #expect(run.errorLines.last?.contains("enrollment E-1: has events but no row") == true, "\(run.errorLines)")
        #expect(run(["rebuild"], env: env) == 0)
        #expect(run(["verify"], env: env) == 0, "\(run.errorLines)")
    }

    @Test("verify pages through more orders than fit a page: all match, and one drifted row on a later page is the one difference")
    func verifyPages() throws {
        try TestWrites(pool: db.pool(size: 1)).registrations(2 * ReadModelCheck.pageSize + 50)
        let run = CLIRun()
        #expect(run(["verify"], env: env) == 0, "\(run.errorLines)")
        let c = try db.connect()
        try c.query("UPDATE ledger.orders SET status = 5 WHERE merchant_order_no = 'P-02040'")
        #expect(run(["verify"], env: env) == 1)
        #expect(run.errorLines.last?.contains("1 difference(s); first: order P-02040: status differ") == true, "\(run.errorLines)")
        try c.query("DELETE FROM ledger.orders WHERE merchant_order_no = 'P-01500'")
        #expect(run(["verify"], env: env) == 1)
        #expect(run.errorLines.last?.contains("2 difference(s)") == true, "\(run.errorLines)")
        #expect(run.output.contains("difference: order P-01500: has events but no row in ledger.orders"), "\(run.output)")
    }

    @Test("verify names an event stored in another order's stream, which rebuild cannot repair")
    func verifyForeignStream() throws {
        try TestWrites(pool: db.pool(size: 1)).registerAndPay("F-1")
        let c = try db.connect()
        // Another writer's event in F-1's stream naming order F-2.
        let observation = try QueryObservation.map(provider: "acme", merchantOrderNo: MerchantOrderNo("F-2"),
                                                   response: .object([("status", .number("5"))]),
                                                   observedAt: nil, receivedAt: Timestamp.now())
        var foreign = EventMapping.newEvent(observation, raw: nil, receipt: Receipt(requestID: "test", verifiedBy: "token:test"))
        foreign.stream = "order-F-1"
        _ = try c.transaction { try EventStore().append([foreign], on: $0) }
        let run = CLIRun()
        #expect(run(["rebuild"], env: env) == 0)
        #expect(run(["verify"], env: env) == 1)
        let all = run.errorLines + run.output
        #expect(all.contains { $0.contains("in stream order-F-1 names order F-2") }, "\(all)")
    }

    @Test("verify exits 1 naming the position of a tampered event")
    func verifyTamper() throws {
        try TestWrites(pool: db.pool(size: 1)).registerAndPay("T-1")
        let c = try db.connect()
        try c.query("SET session_replication_role = replica")
        try c.query("UPDATE ledger.events SET payload = jsonb_set(payload, '{amount}', '\"41.00\"') WHERE position = 1")
        try c.query("SET session_replication_role = origin")
        let run = CLIRun()
        #expect(run(["verify"], env: env) == 1)
        #expect(run.errorLines.last?.contains("position 1") == true)
    }

    @Test("replay reads as a report: the order's number, provider, status, paid mark and event count, then every event with the status after it")
    func replay() throws {
        try TestWrites(pool: db.pool(size: 1)).registerAndPay("R-1")
        let run = CLIRun()
        #expect(run(["replay", "--order", "R-1"], env: env) == 0)
        #expect(Array(run.output.prefix(6)) == ["order     R-1", "provider  web3", "status    3 paid", "paid      yes", "events    2", ""],
                "\(run.output)")
        #expect(run.output.count == 8)
        #expect(run.output[6].contains("→ 1 awaiting_payment"))
        #expect(run.output[7].contains("→ 3 paid"))
        // As of before the payment: the header is the order as it stood then.
        let firstRecorded = try db.connect().query("""
            SELECT to_char(min(recorded_at) AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS t FROM ledger.events
            """).string(0, "t")
        let then = CLIRun()
        #expect(then(["replay", "--order", "R-1", "--as-of", firstRecorded], env: env) == 0,
                "\(then.errorLines)")
        #expect(then.output.count == 7 && then.output[2].hasPrefix("status    1 awaiting_payment (as of ") && then.output[3] == "paid      no",
                "\(then.output)")
        #expect(run(["replay", "--order", "bad order"], env: env) == 64)
        // --as-of takes what asOf and the export bounds take, and nothing read in an unnamed zone.
        for bad in ["yesterday", String(firstRecorded.dropLast()), firstRecorded.replacingOccurrences(of: "Z", with: "1Z")] {
            let refused = CLIRun()
            #expect(refused(["replay", "--order", "R-1", "--as-of", bad], env: env) == 64, "\(bad)")
            #expect(refused.errorLines.count == 1 && refused.errorLines[0].contains("with its offset"), "\(bad): \(refused.errorLines)")
        }
    }
}
