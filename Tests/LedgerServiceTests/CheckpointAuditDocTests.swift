import Foundation
@testable import ledger
import LedgerCore
import LedgerPostgres
@testable import LedgerService
import LedgerTestSupport
import Testing

/// README.md, *For auditors*: the `openssl` and psql blocks, run as they stand there
/// against a real ledger's note, before and after a superuser's rewrite.
@Suite("Checkpoint checks without the ledger, as the README gives them")
struct CheckpointAuditDocTests {
    static let document = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("README.md")

    /// The fenced block after `<!-- tested: NAME -->`.
    static func block(_ name: String) throws -> String {
        let text = try String(contentsOf: document, encoding: .utf8)
        let marker = try #require(text.range(of: "<!-- tested: \(name) -->\n```sh\n"), "README.md has no block \(name)")
        let rest = text[marker.upperBound...]
        let end = try #require(rest.range(of: "\n```\n"))
        return String(rest[..<end.lowerBound]) + "\n"
    }

    @Test("the README's openssl block verifies a note ledger checkpoint made, and its psql block recomputes the chain and catches a rewrite")
    func readmeBlocks() throws {
        let db = try TestDatabase.create("checkpoint_readme")
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("ledger-readme-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: folder + "/notes", withIntermediateDirectories: true)
        let key = try CheckpointKeyFile.generate(into: folder)
        try FileManager.default.copyItem(atPath: folder + "/checkpoint.pub", toPath: folder + "/notes/checkpoint.pub")
        let env = ["DATABASE_URL": db.url, "LEDGER_CHECKPOINT_KEY": folder + "/checkpoint.key", "LEDGER_CHECKPOINT_DIR": folder + "/notes",
                   "LEDGER_CHECKPOINT_ORIGIN": "shop.example/ledger"]
        try TestWrites(pool: db.pool(size: 1)).registerAndPay("RM-1")
        try TestWrites(pool: db.pool(size: 1)).registerAndPay("RM-2")
        let run = CLIRun()
        #expect(run(["checkpoint"], env: env) == 0, "\(run.errorLines)")
        // The README's example names its note 1234.checkpoint; this ledger's head is 4.
        let openssl = try Self.block("auditor-openssl").replacingOccurrences(of: "1234.checkpoint", with: "4.checkpoint")
        let psql = try Self.block("auditor-psql").replacingOccurrences(of: "1234.checkpoint", with: "4.checkpoint")

        let (verified, output) = try Self.bash(openssl, in: folder + "/notes", env: env)
        let keyID = Hex.encode(SignedNote.keyID(name: "shop.example/ledger", publicKey: key.publicKey))
        #expect(verified == 0 && output == "\(keyID)\n\(keyID)\nSignature Verified Successfully\n", "\(output)")

        let (recomputed, clean) = try Self.bash(psql, in: folder + "/notes", env: env)
        #expect(recomputed == 0 && clean == "4 of the 4 events stored recomputed (head 4), 0 differ from their stored hash; the note at 4 matches the recomputed chain\n",
                "\(clean)")

        let c = try db.connect()
        try CheckpointCommandTests.rewriteEvent(on: c)
        let (_, rewritten) = try Self.bash(psql, in: folder + "/notes", env: env)
        #expect(rewritten == "4 of the 4 events stored recomputed (head 4), 0 differ from their stored hash; the note at 4 DOES NOT MATCH the recomputed chain\n",
                "\(rewritten)")

        // An event deleted: the walk stops at the gap, and the count stored says so.
        try c.query("ALTER TABLE ledger.events DISABLE TRIGGER USER")
        try c.query("DELETE FROM ledger.events WHERE position = 2")
        try c.query("ALTER TABLE ledger.events ENABLE TRIGGER USER")
        let (_, gap) = try Self.bash(psql, in: folder + "/notes", env: env)
        #expect(gap == "1 of the 3 events stored recomputed (head 1), 0 differ from their stored hash; the note at 4 DOES NOT MATCH the recomputed chain\n",
                "\(gap)")
        LedgerFixture.drop(db)
    }

    static func bash(_ script: String, in directory: String, env: [String: String]) throws -> (Int32, String) {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/bin/bash")
        p.arguments = ["-e", "-o", "pipefail", "-c", script]
        p.currentDirectoryURL = URL(fileURLWithPath: directory)
        var environment = ProcessInfo.processInfo.environment
        environment["DATABASE_URL"] = env["DATABASE_URL"]
        environment["PATH"] = "/usr/lib/postgresql/15/bin:" + (environment["PATH"] ?? "/usr/bin:/bin")
        p.environment = environment
        return try CheckpointCommandTests.outputAndStatus(of: p)
    }
}
