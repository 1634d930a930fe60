import Foundation
import LedgerService

/// `ledger verify`: parse, verify, print. Exit 1 names the first broken position, or
/// every read-model difference.
struct VerifyCommand {
    let cli: LedgerCLI

    func run(_ words: [String]) throws -> Int32 {
        let args = try Arguments(words, valued: VerifyCheckpoints.valued)
        if args.has("help") {
            cli.output("""
                usage: ledger verify [--checkpoints PATH... [--public-key FILE]]
                  Checks every event's hash-chain link, re-runs the reducer over all events and compares
                  the result with ledger.orders (every column and both documents) and ledger.enrollments.
                  Exits 1 naming the first broken position, or each difference (order or enrollment and every
                  field), then a count per field with a few examples each: after a reducer change, what a
                  rebuild would change. Every webhook event verified by a signature is checked again from its
                  stored raw bytes with the configured keys (LEDGER_WEB3_API_KEYS, LEDGER_BANXA_API_SECRETS);
                  exits 1 naming each whose signature no longer matches.
                """ + "\n" + VerifyCheckpoints.usage)
            return 0
        }
        try args.allowOnly(flags: ["help"])
        let checkpoints = try VerifyCheckpoints.paths(args)
        let configuration = try cli.configuration()
        let started = ContinuousClock.now
        let showProgress = isatty(STDERR_FILENO) == 1
        let connection = try cli.connect(configuration)
        defer { connection.close() }
        let report = try Verification().run(on: connection, signatures: SignatureRecheck(configuration.service),
                                             progress: { events in
            if showProgress { FileHandle.standardError.write(Data("\rledger verify: \(events) events checked".utf8)) }
        }) { cli.output("difference: " + $0.text) }
        if showProgress { FileHandle.standardError.write(Data("\n".utf8)) }
        var notes = 0
        // audit.md: it ends with a summary (events, streams, notes, seconds), whatever it found.
        defer {
            let elapsed = (ContinuousClock.now - started).components
            let seconds = Double(elapsed.seconds) + Double(elapsed.attoseconds) / 1e18
            cli.output("checked: \(report.events) events, \(report.streams) streams, \(notes) notes, \(String(format: "%.2f", seconds)) s")
        }
        cli.output("hash chain intact: \(report.events) events, head position \(report.head)")
        if let signatures = report.signatures {
            signatures.failures.forEach { cli.output("signature: " + $0) }
            signatures.lines.forEach(cli.output)
        }
        if let checkpoints { notes = try VerifyCheckpoints(cli: cli).run(
            paths: checkpoints, publicKeyFile: args.value("public-key"), keyPath: configuration.service.checkpoints.keyPath, on: connection) }
        if let first = report.summary.first {
            report.summary.lines.forEach(cli.output)
            throw MaintenanceError.readModelsDiffer(count: report.summary.total, first: first.text)
        }
        if let signatures = report.signatures, signatures.mismatched > 0 {
            throw MaintenanceError.signaturesDoNotMatch(count: signatures.mismatched, first: signatures.failures.first ?? "")
        }
        cli.output("read models match a replay of the events")
        return 0
    }
}
