import Foundation
import LedgerCore
import LedgerPostgres
@testable import LedgerService
import LedgerTestSupport
import Testing

/// Signed exports (shared/spec/audit.md, *Signed exports*): `ledger export` with a key,
/// `ledger verify-export`, and the HTTP companion route.
@Suite("Checkpoint-signed exports")
struct CheckpointExportTests {
    let db: TestDatabase
    let folder: String
    init() throws {
        db = try TestDatabase.create("checkpoint_export")
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("ledger-signed-export-\(UUID().uuidString)").path
        _ = try CheckpointKeyFile.generate(into: folder)
    }

    var env: [String: String] { ["DATABASE_URL": db.url, "LEDGER_CHECKPOINT_KEY": folder + "/checkpoint.key"] }
    static let period = ["--from", "2000-01-01", "--to", "2999-01-01"]

    func exportEvents() throws -> String {
        try TestWrites(pool: db.pool(size: 1)).registerAndPay("SE-1")
        let out = folder + "/events.csv"
        let run = CLIRun()
        #expect(run(["export", "events"] + Self.period + ["--out", out], env: env) == 0, "\(run.errorLines)")
        return out
    }

    @Test("with a key, the manifest carries a checkpoint for the head and a signature over its fields, and verify-export passes")
    func signedManifestVerifies() throws {
        let out = try exportEvents()
        let manifest = try JSONValue.parse(Array(try Data(contentsOf: URL(fileURLWithPath: out + ".manifest.json"))))
        let checkpoint = try #require(manifest["checkpoint"]?.stringValue.flatMap { Checkpoint(text: $0) })
        #expect(checkpoint.body.position == 2)
        let signature = try #require(manifest["signature"]?.stringValue.flatMap { SignedNote(text: $0) })
        #expect(signature.body.hasPrefix("kind events\nfrom 2000-01-01T00:00:00Z\nto 2999-01-01T00:00:00Z\nformat csv\nrows 2\nsha256 "))
        #expect(signature.body.hasSuffix("highestPosition 2\n"))
        let run = CLIRun()
        #expect(run(["verify-export", out, "--public-key", folder + "/checkpoint.pub"], env: env) == 0, "\(run.output) \(run.errorLines)")
        #expect(run(["verify-export", out], env: env) == 0, "the key derived from LEDGER_CHECKPOINT_KEY: \(run.errorLines)")
        // Not a regular file of a key's size: refused at once, not read for ever.
        for odd in ["/dev/zero", folder] {
            let refused = CLIRun()
            #expect(refused(["verify-export", out, "--public-key", odd], env: env) == 2, "\(odd): \(refused.errorLines)")
            #expect(refused.errorLines.count == 1 && refused.errorLines[0].contains("not a regular file"), "\(refused.errorLines)")
        }
    }

    @Test("an export edited by one byte, or a manifest whose signed fields were edited, fails verify-export naming what differs")
    func editsFail() throws {
        let out = try exportEvents()
        let original = try Data(contentsOf: URL(fileURLWithPath: out))
        var edited = [UInt8](original)
        edited[edited.count - 3] ^= 0x01
        try Data(edited).write(to: URL(fileURLWithPath: out))
        let run = CLIRun()
        #expect(run(["verify-export", out], env: env) == 1)
        #expect(run.output.contains { $0.contains("the file was altered") }, "\(run.output)")
        #expect(run.errorLines.count == 1, "\(run.errorLines)")

        try original.write(to: URL(fileURLWithPath: out))
        let manifestPath = out + ".manifest.json"
        let manifest = try String(contentsOfFile: manifestPath, encoding: .utf8)
        try manifest.replacingOccurrences(of: "\"rows\":2", with: "\"rows\":1").write(toFile: manifestPath, atomically: true, encoding: .utf8)
        let fields = CLIRun()
        #expect(fields(["verify-export", out], env: env) == 1)
        #expect(fields.output.contains("differs: the manifest's fields differ from what its signature signed: rows signed \"2\", manifest says \"1\""),
                "each differing field named, on one line: \(fields.output)")
        #expect(fields.errorLines.count == 1, "\(fields.errorLines)")

        // The signed line reads the same from 2 and "2": a string must not pass for the number
        // (it would excuse the checkpoint taken away with it).
        guard case .object(var parsed) = try JSONValue.parse(Array(manifest.utf8)) else { Issue.record("not an object"); return }
        parsed = parsed.map { name, value in
            (name, name == "highestPosition" ? .string("2") : name == "checkpoint" ? .null : value)
        }.filter { $0.0 != "ledgerHead" }
        try JSONSerializer.string(.object(parsed)).write(toFile: manifestPath, atomically: true, encoding: .utf8)
        let typed = CLIRun()
        #expect(typed(["verify-export", out], env: env) == 1)
        #expect(typed.output.contains { $0.contains("or one is not of its type") }, "\(typed.output)")

        // The totals are not signed: they are counted again from the file.
        guard case .object(let original) = try JSONValue.parse(Array(manifest.utf8)),
              case .array(let totals)? = try JSONValue.parse(Array(manifest.utf8))["totals"], case .object(let total)? = totals.first else {
            Issue.record("no totals"); return
        }
        let raised = JSONValue.object(total.map { $0.0 == "amount" ? ("amount", .string("1" + ($0.1.stringValue ?? ""))) : $0 })
        try JSONSerializer.string(.object(original.map { $0.0 == "totals" ? ("totals", .array([raised])) : $0 }))
            .write(toFile: manifestPath, atomically: true, encoding: .utf8)
        let totalRun = CLIRun()
        #expect(totalRun(["verify-export", out], env: env) == 1)
        #expect(totalRun.output.contains { $0.contains(#"the file's total for "USDT" is 1 row(s), 40.00, its manifest says 1 row(s), 140.00"#) }, "\(totalRun.output)")

        try manifest.write(toFile: manifestPath, atomically: true, encoding: .utf8)
        let other = folder + "/other"
        _ = try CheckpointKeyFile.generate(into: other)
        let foreign = CLIRun()
        #expect(foreign(["verify-export", out, "--public-key", other + "/checkpoint.pub"], env: env) == 1)
        #expect(foreign.output.contains { $0.contains("signature does not verify") }, "\(foreign.output)")
        #expect(foreign.output.contains { $0.contains("checkpoint does not verify") }, "\(foreign.output)")
    }

    @Test("GET /v1/exports/events/manifest is the manifest of the bytes GET /v1/exports/events streams, and it verifies")
    func companionRoute() throws {
        let f = try LedgerFixture.start("checkpoint_export_http")
        defer { f.stop() }
        #expect(try f.register("SH-1").status == 201)
        let query = "?from=2000-01-01&to=2999-01-01&format=jsonl"
        let body = try f.client.get("/v1/exports/events" + query, token: f.accountant)
        let manifest = try f.client.get("/v1/exports/events/manifest" + query, token: f.accountant)
        #expect(body.status == 200 && manifest.status == 200, "\(manifest)")
        let json = try #require(manifest.json)
        #expect(json["sha256"]?.stringValue == Hex.encode(Crypto.sha256(body.body)))
        #expect(json["rows"] == .integer(1))
        #expect(try f.client.get("/v1/exports/events/manifest" + query, token: f.support).status == 403)
    }
}
