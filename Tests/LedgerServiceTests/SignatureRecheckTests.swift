import Foundation
@testable import ledger
import LedgerCore
import LedgerPostgres
@testable import LedgerService
import LedgerTestSupport
import Testing

/// `ledger verify` checks every stored webhook signature again from the raw bytes it
/// kept, so a forger who rewrites a delivery's body and recomputes the hash chain is
/// still caught, unless they also hold the provider's key.
@Suite("Stored webhook signatures are checked again by verify")
struct SignatureRecheckTests {
    /// A web3 and a Banxa delivery, verified and stored.
    static func ledgerWithSignedEvents() throws -> LedgerFixture {
        let f = try LedgerFixture.start("sigcheck")
        let body = LedgerFixture.web3Body("SR-1", status: 3)
        #expect(try f.sendWeb3(body).status == 200)
        let banxa = Array(#"{"order_id":"b1","status":"complete","status_date":"2024-01-31 12:48:36","external_id":"SR-2","crypto_coin":"ETH","crypto_amount":"0.01"}"#.utf8)
        let nonce = String(Timestamp.now().microseconds / 1000)
        let signature = BanxaWebhook.signature(secret: LedgerFixture.banxaSecret, nonce: nonce, body: banxa)
        #expect(try f.client.post("/v1/webhooks/banxa", body: banxa,
                                  headers: [("Authorization", "Bearer \(LedgerFixture.banxaAPIKey):\(signature):\(nonce)")]).status == 200)
        return f
    }

    /// Rewrites the web3 delivery's raw body (its amount), and its metadata with `metadata`
    /// (SQL over the column) when given, then recomputes the chain from it to the head, as
    /// a superuser would. The head is the Banxa event, so the chain verifies: only the
    /// signature can tell. Returns the web3 event's position.
    static func rewriteWeb3Body(_ f: LedgerFixture, metadata: String = "metadata") throws -> Int64 {
        let c = try f.connect()
        defer { c.close() }
        let position = try c.query("SELECT position FROM ledger.events WHERE metadata->'signedWith' ? 'X-Pay-Signature'").int64(0, "position")
        try c.query("SET session_replication_role = replica")
        try c.query("""
            UPDATE ledger.events SET raw = convert_to(replace(convert_from(raw, 'UTF8'), '"40"', '"4000"'), 'UTF8'), metadata = \(metadata)
             WHERE position = $1
            """, [.int(position)])
        let head = try c.query("SELECT max(position) AS head FROM ledger.events").int64(0, "head")
        for p in position...head { try ChainRewrite.rehash(p, on: c) }
        try c.query("SET session_replication_role = origin")
        return position
    }

    @Test("with the keys configured, every stored signature matches and verify says how many it checked")
    func intact() throws {
        let f = try Self.ledgerWithSignedEvents()
        defer { f.stop() }
        let run = CLIRun()
        #expect(run(["verify"], env: LedgerFixture.environment(databaseURL: f.databaseURL)) == 0, "\(run.errorLines)")
        #expect(run.output.contains("web3 signatures: 1 match"), "\(run.output)")
        #expect(run.output.contains("banxa signatures: 1 match"), "\(run.output)")
        let summary = run.output.last ?? ""
        #expect(summary.hasPrefix("checked: 2 events, 2 streams, 0 notes, ") && summary.hasSuffix(" s"),
                "verify ends with a summary of events, streams, notes and seconds: \(run.output)")
    }

    @Test("a raw body rewritten with its hash recomputed keeps the chain intact, but verify names the event whose signature no longer matches")
    func rewrittenBody() throws {
        let f = try Self.ledgerWithSignedEvents()
        defer { f.stop() }
        let position = try Self.rewriteWeb3Body(f)
        let run = CLIRun()
        #expect(run(["verify"], env: LedgerFixture.environment(databaseURL: f.databaseURL)) == 1)
        #expect(run.output.contains { $0.hasPrefix("hash chain intact") }, "the rewrite kept the chain consistent: \(run.output)")
        #expect(run.output.contains("signature: event \(position) (web3 webhook): its stored signature does not match its raw bytes with any configured key"),
                "\(run.output)")
        #expect(run.output.contains("web3 signatures: 0 match, 1 do not"), "\(run.output)")
        #expect(run.errorLines.count == 1 && run.errorLines[0].contains("1 stored webhook signature(s) do not match"), "\(run.errorLines)")
    }

    @Test("a webhook rewritten with its signature headers removed (or its verifiedBy changed) and the chain recomputed: verify names it")
    func evidenceRemoved() throws {
        for edit in ["metadata - 'signedWith'", "jsonb_set(metadata, '{verifiedBy}', '\"token:ops\"')"] {
            let f = try Self.ledgerWithSignedEvents()
            defer { f.stop() }
            let position = try Self.rewriteWeb3Body(f, metadata: edit)
            let run = CLIRun()
            #expect(run(["verify"], env: LedgerFixture.environment(databaseURL: f.databaseURL)) == 1, "\(edit)")
            #expect(run.output.contains { $0.hasPrefix("hash chain intact") }, "\(edit): \(run.output)")
            #expect(run.output.contains { $0.hasPrefix("signature: event \(position) (webhook): it came from a webhook, but its metadata records no signature to check again") },
                    "\(edit): \(run.output)")
            #expect(run.output.contains("webhook events without a signature to check: 1"), "\(edit): \(run.output)")
            #expect(run.output.contains("banxa signatures: 1 match"), "\(edit): \(run.output)")
            #expect(run.errorLines.count == 1 && run.errorLines[0].contains("1 stored webhook signature(s) do not match"), "\(edit): \(run.errorLines)")
        }
    }

    @Test("every failing event is kept to be named, however many; events from elsewhere than a webhook are passed over")
    func everyFailureKept() {
        var recheck = SignatureRecheck(web3Keys: ["the-key"], banxaSecrets: [])
        let signed: JSONValue = .object([
            ("verifiedBy", .string("signature")),
            ("signedWith", .object([("X-Pay-Timestamp", .string("1700000000")), ("X-Pay-Signature", .string(String(repeating: "0", count: 64)))])),
        ])
        for position in 1...1_500 { recheck.check(position: Int64(position), source: "webhook", metadata: signed, raw: Array("{}".utf8)) }
        recheck.check(position: 1_501, source: "webhook", metadata: .object([("verifiedBy", .string("token:ops"))]), raw: nil)
        recheck.check(position: 1_502, source: "operator", metadata: .object([("verifiedBy", .string("token:ops"))]), raw: nil)
        recheck.check(position: 1_503, source: "client", metadata: .object([]), raw: nil)
        #expect(recheck.failures.count == 1_501)
        #expect(recheck.mismatched == 1_501)
        #expect(recheck.failures.map(\.position) == (1...1_501).map(Int64.init))
        #expect(recheck.failures[1_499].text == "event 1500 (web3 webhook): its stored signature does not match its raw bytes with any configured key")
        #expect(recheck.failures[1_500].text == "event 1501 (webhook): it came from a webhook, but its metadata records no signature to check again (verifiedBy token:ops)")
        #expect(recheck.lines == ["web3 signatures: 0 match, 1500 do not", "webhook events without a signature to check: 1"])
    }

    /// A web3 event's metadata as the service records it: signed with `signer` at `timestamp`
    /// over `body`, verified by the key whose fingerprint is `keyId`.
    static func web3Metadata(signer: String, keyId: String?, body: [UInt8]) -> JSONValue {
        let timestamp = "1700000000"
        var fields: [(String, JSONValue)] = [
            ("verifiedBy", .string("signature")),
            ("signedWith", .object([("X-Pay-Timestamp", .string(timestamp)),
                                    ("X-Pay-Signature", .string(Web3Webhook.signature(key: signer, timestamp: timestamp, body: body)))])),
        ]
        if let keyId { fields.append(("keyId", .string(keyId))) }
        return .object(fields)
    }

    @Test("an event signed with a key rotated out (its recorded fingerprint names no configured key) is counted as not checked when the auditor accepts that fingerprint, and fails when not; a configured key's or an unrecorded one's mismatch fails")
    func rotatedOutKey() {
        let body = Array(#"{"merchantOrderNo":"R-1"}"#.utf8)
        let old = WebhookVerification.keyId(of: "old-key"), new = WebhookVerification.keyId(of: "new-key")
        var recheck = SignatureRecheck(web3Keys: ["new-key"], banxaSecrets: [], retiredKeyIds: [old])
        recheck.check(position: 1, source: "webhook", metadata: Self.web3Metadata(signer: "old-key", keyId: old, body: body), raw: body)
        recheck.check(position: 2, source: "webhook", metadata: Self.web3Metadata(signer: "new-key", keyId: new, body: body), raw: body)
        // Bytes rewritten under a configured key's fingerprint, or with none recorded: failures.
        recheck.check(position: 3, source: "webhook", metadata: Self.web3Metadata(signer: "new-key", keyId: new, body: body), raw: body + [0x20])
        recheck.check(position: 4, source: "webhook", metadata: Self.web3Metadata(signer: "old-key", keyId: nil, body: body), raw: body)
        #expect(recheck.failures.map(\.position) == [3, 4])
        #expect(recheck.lines == ["web3 signatures: 1 match, 2 do not, 1 not checked (signed with a retired key: \(old))"])
        // Not accepted: a rewriter can write any fingerprint into the metadata, so it fails, named with its count.
        var strict = SignatureRecheck(web3Keys: ["new-key"], banxaSecrets: [])
        strict.check(position: 7, source: "webhook", metadata: Self.web3Metadata(signer: "old-key", keyId: old, body: body), raw: body)
        strict.check(position: 9, source: "webhook", metadata: Self.web3Metadata(signer: "old-key", keyId: old, body: body), raw: body + [0x20])
        strict.check(position: 11, source: "webhook", metadata: Self.web3Metadata(signer: "forger", keyId: "ffffffff", body: body), raw: body)
        #expect(strict.failures.isEmpty && strict.mismatched == 3)
        #expect(strict.unaccepted == [SignatureRecheck.UnacceptedKey(provider: "web3", keyId: old, events: 2, firstPosition: 7),
                                      SignatureRecheck.UnacceptedKey(provider: "web3", keyId: "ffffffff", events: 1, firstPosition: 11)])
        #expect(strict.failureLines.first?.hasSuffix("accept it with --retired-keys \(old)") == true, "\(strict.failureLines)")
        #expect(strict.lines == ["web3 signatures: 0 match, 3 name a key neither configured nor accepted as retired"])
        // The old key configured again for one run: it is checked, and matches.
        var both = SignatureRecheck(web3Keys: ["new-key", "old-key"], banxaSecrets: [])
        both.check(position: 1, source: "webhook", metadata: Self.web3Metadata(signer: "old-key", keyId: old, body: body), raw: body)
        #expect(both.failures.isEmpty && both.lines == ["web3 signatures: 1 match"])
        // Many keys rotated out: five fingerprints named, then "and others".
        let signers = (1...7).map { "retired-\($0)" }
        var many = SignatureRecheck(web3Keys: ["new-key"], banxaSecrets: [], retiredKeyIds: Set(signers.map(WebhookVerification.keyId(of:))))
        for (i, signer) in signers.enumerated() {
            many.check(position: Int64(i + 1), source: "webhook",
                       metadata: Self.web3Metadata(signer: signer, keyId: WebhookVerification.keyId(of: signer), body: body), raw: body)
        }
        let tally = many.tallies[Web3Webhook.provider]
        #expect(many.failures.isEmpty && tally?.uncheckedRetired == 7 && tally?.retiredKeyIds.count == 5)
        #expect(many.lines.first?.hasSuffix(" and others)") == true, "\(many.lines)")
    }

    @Test("verify run with the webhook keys rotated to a new one fails naming the old key's fingerprint, and passes once --retired-keys accepts it, counting its events as not checked")
    func rotatedKeysThroughVerify() throws {
        let f = try Self.ledgerWithSignedEvents()
        defer { f.stop() }
        var env = LedgerFixture.environment(databaseURL: f.databaseURL)
        env["LEDGER_WEB3_API_KEYS"] = "a-key-configured-later"
        let c = try f.connect()
        defer { c.close() }
        let recorded = try c.query("SELECT metadata->>'keyId' AS k FROM ledger.events WHERE metadata->'signedWith' ? 'X-Pay-Signature'").string(0, "k")
        #expect(LedgerFixture.web3Keys.map(WebhookVerification.keyId(of:)).contains(recorded), "the service records the verifying key's fingerprint")
        let strict = CLIRun()
        #expect(strict(["verify"], env: env) == 1)
        #expect(strict.errorLines.count == 1 && strict.errorLines[0].contains("--retired-keys \(recorded)"), "\(strict.errorLines)")
        let run = CLIRun()
        #expect(run(["verify", "--retired-keys", recorded], env: env) == 0, "\(run.errorLines)")
        #expect(run.output.contains("web3 signatures: 0 match, 1 not checked (signed with a retired key: \(recorded))"), "\(run.output)")
        for bad in ["ABCDEF12", "abc", "abcdef12,", "zzzzzzzz", "\u{FF41}bcdef12"] {
            let refused = CLIRun()
            #expect(refused(["verify", "--retired-keys", bad], env: env) == 64, "\(bad)")
            #expect(refused.errorLines.count == 1 && refused.errorLines[0].contains("8 lowercase hex digits"), "\(refused.errorLines)")
        }
        #expect(run.output.contains("banxa signatures: 1 match"), "\(run.output)")
    }

    @Test("without keys, signed events are counted as not checked and verify still passes")
    func withoutKeys() throws {
        let f = try Self.ledgerWithSignedEvents()
        defer { f.stop() }
        let run = CLIRun()
        #expect(run(["verify"], env: ["DATABASE_URL": f.databaseURL]) == 0, "\(run.errorLines)")
        #expect(run.output.contains("web3 signatures: 0 match, 1 not checked (no key configured)"), "\(run.output)")
    }
}
