import Foundation
@testable import ledger
import LedgerAPI
import LedgerCore
import LedgerPostgres
@testable import LedgerService
import LedgerTestSupport
import Testing

/// `ledger keys generate`, `ledger checkpoint` and `ledger verify --checkpoints` against a
/// real PostgreSQL (shared/spec/audit.md).
@Suite("Checkpoint commands")
struct CheckpointCommandTests {
    let db: TestDatabase
    let folder: String
    init() throws {
        db = try TestDatabase.create("checkpoint")
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("ledger-checkpoint-\(UUID().uuidString)").path
    }

    var keyPath: String { folder + "/keys/checkpoint.key" }
    var notes: String { folder + "/notes" }
    var env: [String: String] {
        ["DATABASE_URL": db.url, "LEDGER_CHECKPOINT_KEY": keyPath, "LEDGER_CHECKPOINT_ORIGIN": "shop.example/ledger",
         "LEDGER_CHECKPOINT_DIR": notes]
    }

    func generateKey() throws {
        let run = CLIRun()
        #expect(run(["keys", "generate", "--out", folder + "/keys"], env: env) == 0, "\(run.errorLines)")
        try FileManager.default.createDirectory(atPath: notes, withIntermediateDirectories: true)
    }

    /// Runs `ledger checkpoint` and gives the note it printed.
    func checkpoint() throws -> String {
        let run = CLIRun()
        #expect(run(["checkpoint"], env: env) == 0, "\(run.errorLines)")
        return run.output.joined(separator: "\n") + "\n"
    }

    @Test("keys generate writes a 0600 PKCS#8 key and an SPKI public key, prints the verifier key last, and never overwrites")
    func keysGenerate() throws {
        let run = CLIRun()
        #expect(run(["keys", "generate", "--out", folder + "/keys"], env: env) == 0)
        let attributes = try FileManager.default.attributesOfItem(atPath: keyPath)
        #expect((attributes[.posixPermissions] as? Int) == 0o600)
        let key = try CheckpointKeyFile.load(path: keyPath)
        #expect(try CheckpointKeyFile.loadPublic(path: folder + "/keys/checkpoint.pub") == key.publicKey)
        #expect(run.output.last == SignedNote.verifierKey(name: "shop.example/ledger", publicKey: key.publicKey))
        #expect(run.output.last?.hasPrefix("shop.example/ledger+") == true)
        let before = try Data(contentsOf: URL(fileURLWithPath: keyPath))
        let again = CLIRun()
        #expect(again(["keys", "generate", "--out", folder + "/keys"], env: env) == 1)
        #expect(again.errorLines.count == 1 && again.errorLines[0].contains("never overwritten"), "\(again.errorLines)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: keyPath)) == before)

        // A dangling link where the public key would go is a name already taken: nothing is
        // written, no private key without its public half.
        let linked = folder + "/linked"
        try FileManager.default.createDirectory(atPath: linked, withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(atPath: linked + "/checkpoint.pub", withDestinationPath: folder + "/nowhere")
        let dangling = CLIRun()
        #expect(dangling(["keys", "generate", "--out", linked], env: env) == 1)
        #expect(dangling.errorLines.count == 1 && dangling.errorLines[0].contains("never overwritten"), "\(dangling.errorLines)")
        #expect(!FileManager.default.fileExists(atPath: linked + "/checkpoint.key"))
    }

    @Test("a missing key, a key others can read, a key of another type and an unwritable folder each give one clear line and exit 2")
    func unusableKeys() throws {
        try generateKey()
        func refused(_ change: [String: String], _ words: String) {
            let run = CLIRun()
            #expect(run(["checkpoint"], env: env.merging(change) { _, b in b }) == 2)
            #expect(run.errorLines.count == 1 && run.errorLines[0].contains(words), "\(run.errorLines)")
        }
        refused(["LEDGER_CHECKPOINT_KEY": folder + "/nothing.key"], "no such file")
        refused(["LEDGER_CHECKPOINT_KEY": ""], "LEDGER_CHECKPOINT_KEY is not set")
        // Nothing else set either: the missing key is still the line.
        let bare = CLIRun()
        #expect(bare(["checkpoint"], env: ["LEDGER_CHECKPOINT_KEY": ""]) == 2)
        #expect(bare.errorLines.count == 1 && bare.errorLines[0].contains("LEDGER_CHECKPOINT_KEY is not set"), "\(bare.errorLines)")
        let rsa = folder + "/rsa.key"
        let made = Process()
        made.executableURL = URL(fileURLWithPath: "/usr/bin/openssl")
        made.arguments = ["genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-out", rsa]
        try made.run()
        made.waitUntilExit()
        chmod(rsa, 0o600)
        refused(["LEDGER_CHECKPOINT_KEY": rsa], "not an Ed25519 key")
        chmod(keyPath, 0o640)
        refused([:], "chmod 600")
        chmod(keyPath, 0o600)
        refused(["LEDGER_CHECKPOINT_DIR": folder + "/missing"], "LEDGER_CHECKPOINT_DIR")
        try FileManager.default.createDirectory(atPath: folder + "/readonly", withIntermediateDirectories: true)
        chmod(folder + "/readonly", 0o500)
        // Root writes a mode-500 folder anyway; sysfs refuses everyone a new file.
        refused(["LEDGER_CHECKPOINT_DIR": getuid() == 0 ? "/sys/kernel" : folder + "/readonly"], "cannot write")
        refused(["LEDGER_CHECKPOINT_ORIGIN": "shop example"], "LEDGER_CHECKPOINT_ORIGIN")
        // A folder named without a key is checked all the same (by an export here).
        let keyless = CLIRun()
        let exportEnv = env.merging(["LEDGER_CHECKPOINT_KEY": "", "LEDGER_CHECKPOINT_DIR": folder + "/missing"]) { _, b in b }
        #expect(keyless(["export", "orders", "--from", "2026-01-01", "--to", "2026-01-02"], env: exportEnv) == 2)
        #expect(keyless.errorLines.count == 1 && keyless.errorLines[0].contains("LEDGER_CHECKPOINT_DIR"), "\(keyless.errorLines)")
    }

    @Test("checkpoint signs the head, stores the note append-only, writes <position>.checkpoint whole, and prints it")
    func checkpointStoresAndCopies() throws {
        try generateKey()
        let empty = CLIRun()
        #expect(empty(["checkpoint"], env: env) == 1)
        #expect(empty.errorLines.first?.contains("empty ledger has no checkpoint") == true)
        try TestWrites(pool: db.pool(size: 1)).registerAndPay("CP-1")
        let note = try checkpoint()
        let checkpoint = try #require(Checkpoint(text: note))
        #expect(checkpoint.body.origin == "shop.example/ledger" && checkpoint.body.position == 2)
        #expect(checkpoint.note.verifies(publicKey: try CheckpointKeyFile.load(path: keyPath).publicKey))
        #expect(try String(contentsOfFile: notes + "/2.checkpoint", encoding: .utf8) == note)
        #expect(try FileManager.default.contentsOfDirectory(atPath: notes) == ["2.checkpoint"])
        let c = try db.connect()
        #expect(try c.query("SELECT note FROM ledger.signed_checkpoints").string(0, "note") == note)
        #expect(try c.query("SELECT hash FROM ledger.events WHERE position = 2").bytes(0, "hash") == checkpoint.body.hash)
        for statement in ["UPDATE ledger.signed_checkpoints SET note = 'x'", "DELETE FROM ledger.signed_checkpoints",
                          "TRUNCATE ledger.signed_checkpoints"] {
            #expect(throws: PostgresError.self, "\(statement)") { try c.query(statement) }
        }
        // The head has not moved: the same note again, and no second row.
        #expect(try self.checkpoint() == note)
        #expect(try c.query("SELECT count(*) AS n FROM ledger.signed_checkpoints").int64(0, "n") == 1)
    }

    @Test("a superuser who rewrites an early event and recomputes every later hash passes the chain walk, and verify --checkpoints names the note")
    func rewriteCaughtByCheckpoints() throws {
        try generateKey()
        try TestWrites(pool: db.pool(size: 1)).registerAndPay("RW-1")
        _ = try checkpoint()
        try TestWrites(pool: db.pool(size: 1)).registerAndPay("RW-2")
        _ = try checkpoint()
        let clean = CLIRun()
        #expect(clean(["verify", "--checkpoints", notes], env: env) == 0, "\(clean.errorLines)")
        #expect(clean.output.contains("checkpoints match the chain: 2 notes verify"), "\(clean.output)")

        let c = try db.connect()
        try Self.rewriteEvent(on: c)
        let walkOnly = CLIRun()
        #expect(walkOnly(["verify"], env: env) == 0, "the rewritten chain is consistent: \(walkOnly.errorLines)")

        let caught = CLIRun()
        #expect(caught(["verify", "--checkpoints", notes, "--public-key", folder + "/keys/checkpoint.pub"], env: env) == 1)
        let failing = caught.output.filter { $0.hasPrefix("checkpoint fails") }
        #expect(failing.count == 2, "\(caught.output)")
        #expect(failing.contains { $0.contains("position 2") && $0.contains("rewritten") }, "\(failing)")
        #expect(failing.contains { $0.contains("position 4") }, "\(failing)")
        #expect(caught.errorLines.last?.contains("2 checkpoint note(s) fail") == true, "\(caught.errorLines)")
        #expect(caught.output.last?.hasPrefix("checked: 4 events, 2 streams, 2 notes, ") == true, "the failing notes are counted: \(caught.output)")

        // The rebuild checks the notes it stored, and projects nothing of the rewritten log.
        let before = try TamperedLogTests.readModels(c)
        let rebuild = CLIRun()
        #expect(rebuild(["rebuild"], env: env) == 1)
        #expect(rebuild.output.filter { $0.hasPrefix("checkpoint fails") }.count == 2, "\(rebuild.output)")
        #expect(rebuild.errorLines.count == 1 && rebuild.errorLines[0].contains("2 stored checkpoint note(s) no longer match the chain")
                && rebuild.errorLines[0].contains("nothing was rebuilt"), "\(rebuild.errorLines)")
        #expect(try TamperedLogTests.readModels(c) == before, "the read models are untouched")

        // ledger checkpoint hands out no old note for the rewritten head, and signs nothing
        // over it, before or after new events arrive on top of it; nor does a signed export.
        for moreEvents in [false, true] {
            if moreEvents { try TestWrites(pool: db.pool(size: 1)).registerAndPay("RW-3") }
            let resign = CLIRun()
            #expect(resign(["checkpoint"], env: env) == 1)
            #expect(resign.output.isEmpty, "\(resign.output)")
            #expect(resign.errorLines.count == 1
                    && resign.errorLines[0].contains("the newest checkpoint note of this key, at position 4, no longer matches the log")
                    && resign.errorLines[0].contains("nothing was signed"), "\(resign.errorLines)")
            #expect(try c.query("SELECT count(*) AS n FROM ledger.signed_checkpoints").int64(0, "n") == 2)
        }
        let export = CLIRun()
        let file = folder + "/events.csv"
        #expect(export(["export", "events", "--from", "2000-01-01", "--to", "2100-01-01", "--out", file], env: env) == 1)
        #expect(export.errorLines.count == 1 && export.errorLines[0].contains("at position 4, no longer matches the log"),
                "\(export.errorLines)")
        #expect(!FileManager.default.fileExists(atPath: file) && !FileManager.default.fileExists(atPath: file + ".manifest.json"))
        var unsigned = env
        unsigned["LEDGER_CHECKPOINT_KEY"] = nil
        unsigned["LEDGER_CHECKPOINT_DIR"] = nil
        #expect(export(["export", "events", "--from", "2000-01-01", "--to", "2100-01-01", "--out", file], env: unsigned) == 0,
                "without a key nothing is signed, and the local checks alone pass the recomputed chain: \(export.errorLines)")
    }

    @Test("stored rows this key did not sign are passed over, a retired key's included; one holding the head's position keeps the note out of the table, not out of the auditor's hands")
    func foreignRowsPassedOver() throws {
        try generateKey()
        try TestWrites(pool: db.pool(size: 1)).registerAndPay("FR-1")
        _ = try checkpoint()
        // A row someone with the database's keys wrote: another key's note for a position far ahead.
        let c = try db.connect()
        let foreign = CheckpointSigner(key: .generate(), origin: "shop.example/ledger", directory: nil)
        try CheckpointStore().insert(foreign.sign(position: 1_000, hash: Array(repeating: 7, count: 32)), on: c)
        try TestWrites(pool: db.pool(size: 1)).registerAndPay("FR-2")
        let next = try #require(Checkpoint(text: try checkpoint()))
        #expect(next.body.position == 4, "the note at 1,000 proves nothing and is passed over")

        // A new key: the old key's notes are passed over too. Its first note, for a head the
        // old key's note holds in the table, is printed and written to the folder, not stored.
        let rotated = CLIRun()
        #expect(rotated(["keys", "generate", "--out", folder + "/new"], env: env) == 0, "\(rotated.errorLines)")
        var newKey = env
        newKey["LEDGER_CHECKPOINT_KEY"] = folder + "/new/checkpoint.key"
        let unmoved = CLIRun()
        #expect(unmoved(["checkpoint"], env: newKey) == 0, "\(unmoved.errorLines)")
        #expect(unmoved.errorLines.count == 1 && unmoved.errorLines[0].contains("already holds a row for position 4")
                && unmoved.errorLines[0].contains("not stored"), "\(unmoved.errorLines)")
        let handedOut = try #require(Checkpoint(text: unmoved.output.joined(separator: "\n") + "\n"))
        let newPublic = try CheckpointKeyFile.load(path: folder + "/new/checkpoint.key").publicKey
        #expect(handedOut.body.position == 4 && handedOut.note.verifies(publicKey: newPublic))
        let oldKey = try CheckpointKeyFile.load(path: keyPath).publicKey
        #expect(Checkpoint(text: try String(contentsOfFile: notes + "/4.checkpoint", encoding: .utf8))?.note.verifies(publicKey: oldKey) == true,
                "the retired key's copy in the folder is kept")
        try TestWrites(pool: db.pool(size: 1)).registerAndPay("FR-3")
        let signed = CLIRun()
        #expect(signed(["checkpoint"], env: newKey) == 0, "\(signed.errorLines)")
        #expect(Checkpoint(text: signed.output.joined(separator: "\n") + "\n")?.body.position == 6, "\(signed.output)")
        let rebuild = CLIRun()
        #expect(rebuild(["rebuild"], env: newKey) == 0, "\(rebuild.errorLines)")
        #expect(rebuild.output.contains { $0.hasPrefix("stored checkpoints match the chain: 1 notes verify; 5 stored rows or files that do not verify under this key") },
                "the table's foreign row and the old key's notes, in the table and in the folder: \(rebuild.output)")

        // A row anyone who can insert wrote at the next head's position: the note is still
        // made from the walked chain and handed out; the row stays as it was.
        let forged = foreign.sign(position: 8, hash: Array(repeating: 9, count: 32))
        try CheckpointStore().insert(forged, on: c)
        try TestWrites(pool: db.pool(size: 1)).registerAndPay("FR-4")
        let run = CLIRun()
        #expect(run(["checkpoint"], env: newKey) == 0, "\(run.errorLines)")
        #expect(run.errorLines.count == 1 && run.errorLines[0].contains("already holds a row for position 8 that this key did not sign"),
                "\(run.errorLines)")
        let eight = try #require(Checkpoint(text: run.output.joined(separator: "\n") + "\n"))
        let storedEight = try c.query("SELECT hash FROM ledger.events WHERE position = 8").bytes(0, "hash")
        #expect(eight.body.hash == storedEight)
        #expect(try c.query("SELECT note FROM ledger.signed_checkpoints WHERE position = 8").string(0, "note") == forged.note.text)
    }

    @Test("a checkpoint folder the rebuild cannot read stops it: the table's notes alone are what the database's keys can alter")
    func unreadableFolderStopsTheCheck() throws {
        try generateKey()
        let key = try CheckpointKeyFile.load(path: keyPath).publicKey
        let c = try db.connect()
        defer { c.close() }
        let missing = folder + "/no-such-folder"
        #expect(throws: CheckpointVerificationError.self) { try StoredNotesCheck(publicKey: key, directory: missing).run(on: c) }
        let empty = folder + "/empty"
        try FileManager.default.createDirectory(atPath: empty, withIntermediateDirectories: true)
        #expect(try StoredNotesCheck(publicKey: key, directory: empty).run(on: c).report.notes == 0, "an empty folder is no error")
    }

    @Test("rebuild checks the stored checkpoint notes first: all match on an intact log, and it rebuilds")
    func rebuildChecksStoredNotes() throws {
        try generateKey()
        try TestWrites(pool: db.pool(size: 1)).registerAndPay("SN-1")
        _ = try checkpoint()
        let run = CLIRun()
        #expect(run(["rebuild"], env: env) == 0, "\(run.errorLines)")
        #expect(run.output.contains("stored checkpoints match the chain: 1 notes verify"), "\(run.output)")

        // The note's row altered with the triggers off (its time line): it no longer verifies,
        // proves nothing, and is counted and passed over; the folder's copy still anchors signing.
        let c = try db.connect()
        try c.query("ALTER TABLE ledger.signed_checkpoints DISABLE TRIGGER USER")
        try c.query("UPDATE ledger.signed_checkpoints SET note = regexp_replace(note, 'time [^\n]*', 'time 2000-01-01T00:00:00Z')")
        try c.query("ALTER TABLE ledger.signed_checkpoints ENABLE TRIGGER USER")
        let again = CLIRun()
        #expect(again(["rebuild"], env: env) == 0, "\(again.errorLines)")
        #expect(again.output.contains { $0.hasPrefix("stored checkpoints match the chain: 1 notes verify; 1 stored rows or files that do not verify under this key") },
                "the folder's copy verifies, the altered row is passed over: \(again.output)")
        let resigned = CLIRun()
        #expect(resigned(["checkpoint"], env: env) == 0, "\(resigned.errorLines)")
        #expect(resigned.errorLines.first?.contains("has not moved since the note at position 2") == true, "\(resigned.errorLines)")
    }

    @Test("the newest note hidden from the table (its row moved, or deleted with the folder's copy kept) still anchors signing")
    func hiddenNewestNote() throws {
        try generateKey()
        try TestWrites(pool: db.pool(size: 1)).registerAndPay("HN-1")
        _ = try checkpoint()   // 2
        try TestWrites(pool: db.pool(size: 1)).registerAndPay("HN-2")
        _ = try checkpoint()   // 4
        let c = try db.connect()
        // Event 3 rewritten and every hash from it recomputed: a walk from the note at 2 passes.
        try Self.rewriteEvent(at: 3, on: c)
        try TestWrites(pool: db.pool(size: 1)).registerAndPay("HN-3")
        var tableOnly = env
        tableOnly["LEDGER_CHECKPOINT_DIR"] = nil
        // The row of the note at 4 moved far away: it is still found by its signature.
        try c.query("ALTER TABLE ledger.signed_checkpoints DISABLE TRIGGER USER")
        try c.query("UPDATE ledger.signed_checkpoints SET position = 1000000000 WHERE position = 4")
        let moved = CLIRun()
        #expect(moved(["checkpoint"], env: tableOnly) == 1)
        #expect(moved.errorLines.first?.contains("at position 4, no longer matches the log") == true, "\(moved.errorLines)")
        // Deleted: the folder's copy is what remains, and it is enough.
        try c.query("DELETE FROM ledger.signed_checkpoints WHERE position = 1000000000")
        try c.query("ALTER TABLE ledger.signed_checkpoints ENABLE TRIGGER USER")
        let deleted = CLIRun()
        #expect(deleted(["checkpoint"], env: env) == 1)
        #expect(deleted.errorLines.first?.contains("at position 4, no longer matches the log") == true, "\(deleted.errorLines)")
        #expect(try c.query("SELECT count(*) AS n FROM ledger.signed_checkpoints").int64(0, "n") == 1)
        // Nor does a rebuild project the rewritten log: it checks the folder's notes too.
        let before = try TamperedLogTests.readModels(c)
        let rebuild = CLIRun()
        #expect(rebuild(["rebuild"], env: env) == 1)
        #expect(rebuild.output.contains { $0.hasPrefix("checkpoint fails") && $0.contains("4.checkpoint") }, "\(rebuild.output)")
        #expect(rebuild.errorLines.first?.contains("1 stored checkpoint note(s) no longer match the chain") == true, "\(rebuild.errorLines)")
        #expect(try TamperedLogTests.readModels(c) == before, "the read models are untouched")
        let tableAlone = CLIRun()
        #expect(tableAlone(["rebuild"], env: tableOnly) == 0, "without the folder only the table's notes are there, and they match: \(tableAlone.errorLines)")
    }

    @Test("with the chain broken, verify still checks every note and ends with its summary, then exits 1 naming the break")
    func brokenChainStillChecksNotes() throws {
        try generateKey()
        try TestWrites(pool: db.pool(size: 1)).registerAndPay("BC-1")
        _ = try checkpoint()
        let c = try db.connect()
        try c.query("ALTER TABLE ledger.events DISABLE TRIGGER USER")
        try c.query("UPDATE ledger.events SET metadata = metadata || '{\"requestId\":\"edited\"}' WHERE position = 1")
        try c.query("ALTER TABLE ledger.events ENABLE TRIGGER USER")
        let run = CLIRun()
        #expect(run(["verify", "--checkpoints", notes], env: env) == 1)
        #expect(run.output.contains { $0.hasPrefix("hash chain broken at position 1") }, "\(run.output)")
        #expect(run.output.contains("checkpoints match the chain: 1 notes verify"), "the note's position still holds its hash: \(run.output)")
        #expect(run.output.contains("read models match a replay of the events"), "\(run.output)")
        #expect(run.output.last?.hasPrefix("checked: 2 events, 1 streams, 1 notes, ") == true, "\(run.output)")
        #expect(run.errorLines.count == 1 && run.errorLines[0].contains("hash chain broken at position 1"), "\(run.errorLines)")
    }

    @Test("a notes path that does not exist, or a folder without notes, is refused before the log is read")
    func badNotesPathsRefusedFirst() throws {
        try generateKey()
        try TestWrites(pool: db.pool(size: 1)).registerAndPay("NP-1")
        let empty = folder + "/empty"
        try FileManager.default.createDirectory(atPath: empty, withIntermediateDirectories: true)
        for (path, says) in [(folder + "/missing", "no such file or folder"), (empty, "no .checkpoint files in this folder")] {
            let run = CLIRun()
            #expect(run(["verify", "--checkpoints", path], env: env) == 1, "\(path)")
            #expect(run.output.isEmpty, "nothing was checked: \(run.output)")
            #expect(run.errorLines.count == 1 && run.errorLines[0].contains(says), "\(run.errorLines)")
        }
    }

    @Test("verify --checkpoints fails a note with one byte changed and a note signed by another key, naming each by position")
    func editedAndForeignNotes() throws {
        try generateKey()
        try TestWrites(pool: db.pool(size: 1)).registerAndPay("EN-1")
        let note = try checkpoint()
        var edited = Array(note.utf8)
        edited[edited.count - 10] = edited[edited.count - 10] == UInt8(ascii: "A") ? UInt8(ascii: "B") : UInt8(ascii: "A")
        try Data(edited).write(to: URL(fileURLWithPath: notes + "/2.checkpoint"))
        let foreign = CheckpointSigner(key: .generate(), origin: "shop.example/ledger", directory: nil)
        let c = try db.connect()
        let head = try EventStore().head(on: c)
        try foreign.sign(position: head.position, hash: head.hash).note.text.write(toFile: notes + "/9.checkpoint", atomically: true, encoding: .utf8)
        let run = CLIRun()
        #expect(run(["verify", "--checkpoints", notes + "/2.checkpoint", notes + "/9.checkpoint"], env: env) == 1)
        let failing = run.output.filter { $0.hasPrefix("checkpoint fails") }
        #expect(failing.count == 2 && failing.allSatisfy { $0.contains("position 2") && $0.contains("signature does not verify") }, "\(failing)")
    }

    @Test("a note made by ledger checkpoint verifies with openssl pkeyutl -verify -rawin, under the key id audit.md derives")
    func opensslVerifiesANote() throws {
        try generateKey()
        try TestWrites(pool: db.pool(size: 1)).registerAndPay("OS-1")
        let note = try checkpoint()
        try note.write(toFile: folder + "/note", atomically: true, encoding: .utf8)
        let script = """
            set -e
            cd "$1"
            # The body is everything before the empty line; the signature line's last word is base64(key id || signature).
            sed '/^$/,$d' note > body
            sed -n '/^$/,$p' note | sed -n 's/^\\xe2\\x80\\x94 [^ ]* //p' | base64 -d > keyid-and-sig
            head -c 4 keyid-and-sig > keyid
            tail -c 64 keyid-and-sig > sig
            openssl pkey -pubin -in keys/checkpoint.pub -outform DER | tail -c 32 > pub.raw
            { printf '%s\\n\\001' "$(head -1 body)"; cat pub.raw; } | openssl dgst -sha256 -binary | head -c 4 > expected-keyid
            cmp keyid expected-keyid
            openssl pkeyutl -verify -rawin -pubin -inkey keys/checkpoint.pub -in body -sigfile sig
            """
        let (status, output) = try Self.bash(script, folder)
        #expect(status == 0 && output.contains("Signature Verified Successfully"), "\(output)")
    }

    @Test("LEDGER_CHECKPOINT_* are read by LedgerConfiguration: defaults, and a bad origin or interval named")
    func configuration() throws {
        let defaults = try LedgerConfiguration.fromEnvironment(["DATABASE_URL": db.url]).service.checkpoints
        #expect(defaults == CheckpointConfiguration() && defaults.origin == "ledger" && defaults.intervalSeconds == 3600 && defaults.keyPath == nil)
        let set = try LedgerConfiguration.fromEnvironment(env.merging(["LEDGER_CHECKPOINT_INTERVAL": "60"]) { _, b in b }).service.checkpoints
        #expect(set.keyPath == keyPath && set.origin == "shop.example/ledger" && set.directory == notes && set.intervalSeconds == 60)
        for (name, value) in [("LEDGER_CHECKPOINT_ORIGIN", "a+b"), ("LEDGER_CHECKPOINT_INTERVAL", "0")] {
            #expect(throws: ConfigurationError.self) { try LedgerConfiguration.fromEnvironment(["DATABASE_URL": db.url, name: value]) }
        }
    }

    static func bash(_ script: String, _ arguments: String...) throws -> (Int32, String) {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/bin/bash")
        p.arguments = ["-c", script, "bash"] + arguments
        return try outputAndStatus(of: p)
    }

    /// Runs `p` as configured, its stdout and stderr gathered into one text.
    static func outputAndStatus(of p: Process) throws -> (Int32, String) {
        let pipe = Pipe()
        p.standardOutput = pipe
        p.standardError = pipe
        try p.run()
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        return (p.terminationStatus, String(decoding: data, as: UTF8.self))
    }

    @Test("a rewrite below the newest note that leaves the note's own row as signed is refused: the chain is walked from the note to the head")
    func rewriteKeepingTheNotedRow() throws {
        try generateKey()
        try TestWrites(pool: db.pool(size: 1)).registerAndPay("KN-1")
        _ = try checkpoint()   // position 2
        try TestWrites(pool: db.pool(size: 1)).registerAndPay("KN-2")
        let c = try db.connect()
        try c.query("ALTER TABLE ledger.events DISABLE TRIGGER USER")
        try c.query("UPDATE ledger.events SET metadata = metadata || '{\"requestId\":\"rewritten\"}' WHERE position = 1")
        try c.query(Self.recomputeEveryHash.replacingOccurrences(
            of: "UPDATE ledger.events SET hash = previous WHERE position = e.position;",
            with: "UPDATE ledger.events SET hash = previous WHERE position = e.position AND e.position <> 2;"))
        try c.query("ALTER TABLE ledger.events ENABLE TRIGGER USER")
        #expect(try c.query("SELECT count(*) AS n FROM ledger.events WHERE position IN (1, 3, 4)").int64(0, "n") == 3)
        let run = CLIRun()
        #expect(run(["checkpoint"], env: env) == 1)
        #expect(run.errorLines.count == 1 && run.errorLines[0].contains("at position 2, no longer matches the log")
                && run.errorLines[0].contains("breaks at position 3"), "\(run.errorLines)")
        #expect(try c.query("SELECT count(*) AS n FROM ledger.signed_checkpoints").int64(0, "n") == 1)
    }

    /// The insider's rewrite: an event's metadata edited with the triggers off (the first
    /// one's unless told), and every hash recomputed, so the chain's walk passes and only
    /// notes catch it.
    static func rewriteEvent(at position: Int64 = 1, on c: PostgresConnection) throws {
        try c.query("ALTER TABLE ledger.events DISABLE TRIGGER USER")
        try c.query("UPDATE ledger.events SET metadata = metadata || '{\"requestId\":\"rewritten\"}' WHERE position = $1",
                    [.int(position)])
        try c.query(recomputeEveryHash)
        try c.query("ALTER TABLE ledger.events ENABLE TRIGGER USER")
    }

    /// What the insider does: every hash from the first event on, recomputed with ledger.event_hash.
    static let recomputeEveryHash = """
        DO $$
        DECLARE
            previous bytea := decode(repeat('00', 32), 'hex');
            e record;
        BEGIN
            FOR e IN SELECT * FROM ledger.events ORDER BY position LOOP
                previous := ledger.event_hash(previous, e.position, e.event_id, e.stream, e.stream_version, e.type, e.source,
                                              e.payload, e.raw, e.metadata, e.idempotency_key, e.recorded_at, e.observed_at);
                UPDATE ledger.events SET hash = previous WHERE position = e.position;
            END LOOP;
        END
        $$
        """
}
