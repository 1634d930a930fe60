import Foundation
import LedgerCore
import LedgerPostgres
@testable import LedgerService
import LedgerTestSupport
import Testing

/// Checkpoints over HTTP and in `ledger serve` (shared/spec/audit.md, *Making checkpoints*).
@Suite("Checkpoints served and signed by ledger serve")
struct CheckpointServeTests {
    /// A database holding one order registered and paid, a checkpoint key pair in a folder of
    /// its own, and a token of `role`.
    static func keyedLedger(_ name: String, paid order: String, role: Role) throws -> (TestDatabase, folder: String, token: String) {
        let db = try TestDatabase.create(name)
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("ledger-\(name)-\(UUID().uuidString)").path
        _ = try CheckpointKeyFile.generate(into: folder)
        try TestWrites(pool: db.pool(size: 1)).registerAndPay(order)
        let token = try TokenIssuer().create(role: role, name: role.rawValue, expiresAt: nil, on: db.connect())
        return (db, folder, token)
    }

    @Test("GET /v1/ledger/head gives the newest note as checkpoint, and GET /v1/ledger/checkpoints pages through them oldest first, for auditors only")
    func checkpointRoutes() throws {
        let f = try LedgerFixture.start("checkpoint_http")
        defer { f.stop() }
        #expect(try f.client.get("/v1/ledger/head", token: f.auditor).json?["checkpoint"] == nil)
        let signer = CheckpointSigner(key: .generate(), origin: "shop.example/ledger", directory: nil)
        var notes = [String]()
        for n in 1...3 {
            #expect(try f.register("CH-\(n)").status == 201)
            guard case .signed(let checkpoint) = try signer.checkpoint(on: f.connect()) else { Issue.record("nothing signed"); return }
            notes.append(checkpoint.note.text)
        }
        let head = try #require(try f.client.get("/v1/ledger/head", token: f.auditor).json)
        #expect(head["checkpoint"]?["note"]?.stringValue == notes[2])
        #expect(head["checkpoint"]?["position"] == .integer(3))
        #expect(head["checkpoint"]?["hash"] == head["hash"])

        let first = try #require(try f.client.get("/v1/ledger/checkpoints?limit=2", token: f.auditor).json)
        #expect(first["checkpoints"]?.arrayValue?.compactMap { $0["note"]?.stringValue } == Array(notes[0..<2]))
        #expect(first["nextCursor"] == .integer(2))
        let second = try #require(try f.client.get("/v1/ledger/checkpoints?after=2&limit=2", token: f.auditor).json)
        #expect(second["checkpoints"]?.arrayValue?.compactMap { $0["note"]?.stringValue } == [notes[2]])
        #expect(second["nextCursor"] == .null)
        #expect(try f.client.get("/v1/ledger/checkpoints?limit=0", token: f.auditor).status == 400)
        #expect(try f.client.get("/v1/ledger/checkpoints?after=x", token: f.auditor).status == 400)
        #expect(try f.client.get("/v1/ledger/checkpoints", token: f.support).status == 403)
    }

    @Test("notes are served as they were signed: with the key, a row another key wrote is not served as a signed note, and a row's altered columns are not what is served")
    func servedNotesAreTheSigned() throws {
        let (db, folder, token) = try Self.keyedLedger("checkpoint_served", paid: "SV-1", role: .auditor)   // positions 1, 2
        defer { LedgerFixture.drop(db) }
        let keyEnv = ["LEDGER_CHECKPOINT_KEY": folder + "/checkpoint.key"]
        let run = CLIRun()
        #expect(run(["checkpoint"], env: keyEnv.merging(["DATABASE_URL": db.url]) { $1 }) == 0, "\(run.errorLines)")
        let c = try db.connect()
        defer { c.close() }
        // A row written by someone with the database's keys: another key's note, far ahead.
        let foreign = CheckpointSigner(key: .generate(), origin: "ledger", directory: nil)
        try CheckpointStore().insert(foreign.sign(position: 1_000, hash: Array(repeating: 7, count: 32)), on: c)
        // The genuine row's columns altered; its note still says what was signed.
        try c.query("ALTER TABLE ledger.signed_checkpoints DISABLE TRIGGER USER")
        try c.query("UPDATE ledger.signed_checkpoints SET hash = decode(repeat('00', 32), 'hex') WHERE position = 2")
        try c.query("ALTER TABLE ledger.signed_checkpoints ENABLE TRIGGER USER")

        let serve = try ServeProcess(databaseURL: db.url, environment: keyEnv)
        #expect(serve.waitUntilServing(within: 30), "\(serve.logText)")
        let client = HTTPClient(port: serve.port)
        let head = try #require(try client.get("/v1/ledger/head", token: token).json)
        #expect(head["checkpoint"]?["position"] == .integer(2), "the forged note at 1,000 is passed over: \(head)")
        #expect(head["checkpoint"]?["hash"] == head["hash"], "the hash the note signed, not the altered column: \(head)")
        let list = try #require(try client.get("/v1/ledger/checkpoints", token: token).json)
        #expect(list["checkpoints"]?.arrayValue?.compactMap { $0["position"]?.int64Value } == [2], "\(list)")
        #expect(serve.signal(SIGTERM) == 0)

        // Without the key the service cannot tell whose note a row holds: both are served, each as its note says.
        let queries = CheckpointQueries(pool: db.pool(size: 1))
        let unkeyed = try queries.list(after: 0, limit: 10)["checkpoints"]?.arrayValue ?? []
        #expect(unkeyed.compactMap { $0["position"]?.int64Value } == [2, 1_000])
        #expect(unkeyed.first?["hash"] == head["hash"])
    }

    @Test("ledger serve signs a note every LEDGER_CHECKPOINT_INTERVAL when the head moved, and one more at SIGTERM")
    func periodicAndFinalNotes() throws {
        let db = try TestDatabase.create("checkpoint_serve")
        defer { LedgerFixture.drop(db) }
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("ledger-serve-notes-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: folder + "/notes", withIntermediateDirectories: true)
        let key = try CheckpointKeyFile.generate(into: folder)
        let env = ["LEDGER_CHECKPOINT_KEY": folder + "/checkpoint.key", "LEDGER_CHECKPOINT_DIR": folder + "/notes",
                   "LEDGER_CHECKPOINT_INTERVAL": "2"]
        try TestWrites(pool: db.pool(size: 1)).registerAndPay("SV-1")
        let serve = try ServeProcess(databaseURL: db.url, environment: env)
        #expect(serve.waitUntilServing(within: 30), "\(serve.logText)")
        let c = try db.connect()
        func positions() throws -> [Int64] {
            let r = try c.query("SELECT position FROM ledger.signed_checkpoints ORDER BY position")
            return try (0..<r.count).map { try r.int64($0, "position") }
        }
        #expect(eventually(within: 20) { try positions() == [2] }, "no periodic note: \(serve.logText)")
        // The head has not moved: the next intervals sign nothing.
        Thread.sleep(forTimeInterval: 2.5)
        #expect(try positions() == [2])
        try TestWrites(pool: db.pool(size: 1)).registerAndPay("SV-2")
        #expect(serve.signal(SIGTERM) == 0, "\(serve.logText)")
        #expect(try positions() == [2, 4], "\(serve.logText)")
        #expect(serve.logText.contains("shutdown") && serve.logText.contains("signed a checkpoint"), "\(serve.logText)")
        for position in [2, 4] {
            let text = try String(contentsOfFile: folder + "/notes/\(position).checkpoint", encoding: .utf8)
            #expect(Checkpoint(text: text)?.note.verifies(publicKey: key.publicKey) == true)
        }
    }

    @Test("with a key, ledger serve's export manifest route signs it, and the saved body and manifest pass ledger verify-export")
    func signedManifestOverHTTP() throws {
        let (db, folder, token) = try Self.keyedLedger("checkpoint_serve_export", paid: "SX-1", role: .accountant)
        defer { LedgerFixture.drop(db) }
        let serve = try ServeProcess(databaseURL: db.url, environment: ["LEDGER_CHECKPOINT_KEY": folder + "/checkpoint.key"])
        #expect(serve.waitUntilServing(within: 30), "\(serve.logText)")
        let client = HTTPClient(port: serve.port)
        let query = "?from=2000-01-01&to=2999-01-01&format=csv"
        let body = try client.get("/v1/exports/orders" + query, token: token)
        let manifest = try client.get("/v1/exports/orders/manifest" + query, token: token)
        #expect(body.status == 200 && manifest.status == 200, "\(manifest)")
        #expect(manifest.json?["signature"]?.stringValue != nil && manifest.json?["checkpoint"]?.stringValue != nil)
        try Data(body.body).write(to: URL(fileURLWithPath: folder + "/orders.csv"))
        try Data(manifest.body).write(to: URL(fileURLWithPath: folder + "/orders.csv.manifest.json"))
        let run = CLIRun()
        #expect(run(["verify-export", folder + "/orders.csv", "--public-key", folder + "/checkpoint.pub"], env: ["DATABASE_URL": db.url]) == 0,
                "\(run.output) \(run.errorLines)")

        // A note stored, then the log rewritten below it with its chain recomputed: the
        // manifest route signs nothing over it, and neither does the note at shutdown.
        #expect(run(["checkpoint"], env: ["DATABASE_URL": db.url, "LEDGER_CHECKPOINT_KEY": folder + "/checkpoint.key"]) == 0,
                "\(run.errorLines)")
        let c = try db.connect()
        try CheckpointCommandTests.rewriteEvent(on: c)
        let refused = try client.get("/v1/exports/orders/manifest" + query, token: token)
        #expect(refused.status == 500 && refused.isProblem && refused.json?["type"]?.stringValue == "urn:ledger:problem:integrity-failure"
                && refused.text.contains("at position 2, no longer matches the log"), "\(refused)")
        // New events on the rewritten log: the note at shutdown would sign them, and does not.
        try TestWrites(pool: db.pool(size: 1)).registerAndPay("SX-2")
        #expect(serve.signal(SIGTERM) == 0)
        #expect(serve.logText.contains("no checkpoint is signed while the stored notes contradict the log"), "\(serve.logText)")
        #expect(try c.query("SELECT count(*) AS n FROM ledger.signed_checkpoints").int64(0, "n") == 1)
    }

    @Test("ledger serve refuses to start, exit 2, with a key it cannot use")
    func refusesAnUnusableKey() throws {
        let db = try TestDatabase.create("checkpoint_serve_key")
        defer { LedgerFixture.drop(db) }
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("ledger-serve-key-\(UUID().uuidString)").path
        _ = try CheckpointKeyFile.generate(into: folder)
        chmod(folder + "/checkpoint.key", 0o644)
        let serve = try ServeProcess(databaseURL: db.url, environment: ["LEDGER_CHECKPOINT_KEY": folder + "/checkpoint.key"])
        #expect(eventually(within: 20) { serve.hasExited }, "\(serve.logText)")
        #expect(serve.signal(SIGTERM, waitSeconds: 1).map { ($0 >> 8) & 0xff } == 2)
        #expect(serve.logText.contains("LEDGER_CHECKPOINT_KEY") && serve.logText.contains("chmod 600"), "\(serve.logText)")
    }
}
