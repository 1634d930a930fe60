import Foundation
import LedgerCore
import LedgerService

/// `ledger verify`: parse, verify, print. Every check runs and is reported; exit 1
/// names the first failure.
struct VerifyCommand {
    let cli: LedgerCLI

    func run(_ words: [String]) throws -> Int32 {
        let args = try Arguments(words, valued: VerifyCheckpoints.valued.union(["retired-keys"]))
        if args.has("help") {
            cli.output("""
                usage: ledger verify [--retired-keys ID,...] [--checkpoints PATH... [--public-key FILE]]
                  Checks every event's hash-chain link, re-runs the reducer over all events and compares
                  the result with ledger.orders (every column and both documents) and ledger.enrollments.
                  Every webhook event is checked again from its stored raw bytes and signature headers with the
                  configured keys (LEDGER_WEB3_API_KEYS, LEDGER_BANXA_API_SECRETS); a webhook event whose
                  signature is missing fails too. Every check runs whatever the others find: it names the
                  first broken position, each failing signature and note, and each read-model difference
                  (order or enrollment and every field), then a count per field with a few examples each
                  (after a reducer change, what a rebuild would change), and ends with a summary. Exits 1
                  when anything fails.
                  --retired-keys ID,... fingerprints (8 hex digits, as verify names them) of webhook keys rotated out:
                                the events whose metadata names one are counted as not checked. An event naming a
                                fingerprint neither configured nor listed here fails, since metadata can be rewritten.
                """ + "\n" + VerifyCheckpoints.usage)
            return 0
        }
        try args.allowOnly(flags: ["help"])
        let retired = try Self.retiredKeyIds(args.value("retired-keys"))
        let configuration = try cli.configuration()
        // The notes' key and files are read before the scan: a wrong path is told at once.
        let checkpoints = try VerifyCheckpoints.paths(args).map {
            try VerifyCheckpoints(cli: cli, paths: $0, publicKeyFile: args.value("public-key"),
                                  keyPath: configuration.service.checkpoints.keyPath)
        }
        let started = ContinuousClock.now
        let showProgress = isatty(STDERR_FILENO) == 1
        let connection = try cli.connect(configuration)
        defer { connection.close() }
        var notesChecked: CheckpointVerification.Report?
        let report = try Verification().run(on: connection, signatures: SignatureRecheck(configuration.service, retiredKeyIds: retired),
                                             progress: { events in
            if showProgress { FileHandle.standardError.write(Data("\rledger verify: \(events) events checked".utf8)) }
        }, inSnapshot: { c in
            // The notes against the chain as the scan read it, in its snapshot.
            if let checkpoints {
                if showProgress { FileHandle.standardError.write(Data("\n".utf8)) }
                notesChecked = try checkpoints.check(on: c)
            }
        }) { cli.output("difference: " + $0.text) }
        if showProgress { FileHandle.standardError.write(Data("\n".utf8)) }
        // audit.md: every check runs and is reported, and it ends with a summary (events,
        // streams, notes, seconds); then it exits 1 naming the first failure, if any.
        var failures: [String] = []
        switch report.chain {
        case .intact:
            cli.output("hash chain intact: \(report.events) events, head position \(report.head)")
        case .broken(let position, let reason):
            let broken = MaintenanceError.chainBroken(position: position, reason).description
            cli.output(broken)
            failures.append(broken)
        }
        if let signatures = report.signatures {
            signatures.failureLines.forEach { cli.output("signature: " + $0) }
            signatures.lines.forEach(cli.output)
            if let first = signatures.failureLines.first {
                failures.append(MaintenanceError.signaturesDoNotMatch(count: signatures.mismatched, first: first).description)
            }
        }
        var notes = 0
        if let checkpoints, let checked = notesChecked {
            let outcome = checkpoints.report(checked)
            notes = outcome.notes
            if let failure = outcome.failure { failures.append(failure) }
        }
        if let first = report.summary.first {
            report.summary.lines.forEach(cli.output)
            failures.append(MaintenanceError.readModelsDiffer(count: report.summary.total, first: first.text).description)
        } else {
            cli.output("read models match a replay of the events")
        }
        let elapsed = (ContinuousClock.now - started).components
        let seconds = Double(elapsed.seconds) + Double(elapsed.attoseconds) / 1e18
        cli.output("checked: \(report.events) events, \(report.streams) streams, \(notes) notes, \(String(format: "%.2f", seconds)) s")
        guard let first = failures.first else { return 0 }
        let more = failures.count > 1 ? " (and \(failures.count - 1) more failure(s) above)" : ""
        throw CLIError.failed(first + more, exitCode: 1)
    }

    /// `--retired-keys ID,...`: key fingerprints as verify prints them (8 lowercase hex digits).
    static func retiredKeyIds(_ value: String?) throws -> Set<String> {
        guard let value else { return [] }
        let ids = value.split(separator: ",", omittingEmptySubsequences: false).map(String.init)
        for id in ids where id.utf8.count != 8 || !id.utf8.allSatisfy({ (48...57).contains($0) || (97...102).contains($0) }) {
            throw CLIError.usage("--retired-keys takes key fingerprints, 8 lowercase hex digits each, separated by commas: \(JSONSerializer.quoted(id)) is not one")
        }
        return Set(ids)
    }
}
