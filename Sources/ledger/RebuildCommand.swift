import Foundation
import LedgerService

/// `ledger rebuild`: parse, rebuild, print.
struct RebuildCommand {
    let cli: LedgerCLI

    func run(_ words: [String]) throws -> Int32 {
        let args = try Arguments(words, valued: ["pace"])
        if args.has("help") {
            cli.output("""
                usage: ledger rebuild
                  Rebuilds the read models (ledger.orders, ledger.enrollments) from ledger.events, online: into new
                  tables while the service keeps writing and answering, then swapped in under a lock held only for
                  the swap. Verifies the hash chain as it reads; on a break it names the position, exits 1 and
                  leaves the read models as they were.
                  --pace F  the share of the build's time spent working, 0.01 <= F <= 1 (default 0.15): it
                            pauses after every quarter millisecond of work, its own and PostgreSQL's for it,
                            leaving the cores to the service; 1 on an idle ledger.
                """)
            return 0
        }
        try args.allowOnly(flags: ["help"])
        try args.refuseWords("rebuild")
        // The service comes first: the rebuild folds and renders at a lower CPU priority (this
        // thread, and the threads it starts, inherit it), and the thread's own comes back after
        // (the command also runs inside other processes: the tests).
        let which = __priority_which_t(PRIO_PROCESS.rawValue)
        errno = 0
        let priorNice = getpriority(which, 0)
        let knewPrior = errno == 0
        _ = setpriority(which, 0, 10)
        defer { if knewPrior { _ = setpriority(which, 0, priorNice) } }
        var rebuild = Rebuild()
        rebuild.pace = Self.defaultPace
        if let text = args.value("pace") {   // a usage mistake is told before anything connects
            // 0.01 is the least share the duty cycle keeps: a smaller one is refused, not raised unseen.
            guard let pace = Double(text), pace >= 0.01, pace <= 1 else { throw CLIError.usage("--pace must be a number from 0.01 to 1") }
            rebuild.pace = pace
        }
        let configuration = try cli.configuration()
        let reader = try cli.connect(configuration), writer = try cli.connect(configuration)
        defer { reader.close(); writer.close() }
        // With the checkpoint key, the notes signed so far (stored, and in the folder) must still
        // match the chain: a rewrite that recomputed every hash after them is refused before
        // anything is built.
        if let keyPath = configuration.service.checkpoints.keyPath {
            let check = StoredNotesCheck(publicKey: try CheckpointKeyFile.load(path: keyPath).publicKey,
                                         directory: configuration.service.checkpoints.directory)
            let (report, passedOver) = try check.run(on: reader)
            if let first = report.failures.first {
                for failure in report.failures { cli.output("checkpoint fails: " + failure) }
                throw MaintenanceError.rebuildRefused("\(report.failures.count) stored checkpoint note(s) no longer match the chain "
                    + "(the first: \(first)); the log was rewritten after they were signed: nothing was rebuilt")
            }
            cli.output("stored checkpoints match the chain: \(report.notes) notes verify"
                + (passedOver > 0 ? "; \(passedOver) stored rows or files that do not verify under this key (another key's, altered, "
                    + "or written outside the ledger) passed over" : ""))
        }
        let outcome = try rebuild.run(reader: reader, writer: writer)
        cli.output("phases: " + outcome.phases.map { "\($0.0) \(Self.format($0.1)) s" }.joined(separator: ", "))
        cli.output("rebuilt the read models from \(outcome.events) events in \(Self.format(outcome.seconds)) s "
            + "(\(outcome.caughtUp) arrived meanwhile; the swap held writers \(Self.format(outcome.swapSeconds * 1000)) ms, "
            + "\(outcome.swapAttempts) attempt\(outcome.swapAttempts == 1 ? "" : "s"))")
        return 0
    }

    /// Measured on 2 cores under a steady load of 300 webhooks a second, 1,000,000 events: the
    /// writes' p99 went from 4-6 ms to 7-10 ms at 0.15, 8 ms at 0.1 and 10 ms at 0.3
    /// (docs/operations.md). At 0.15 the rebuild takes about 55 s there, against 11 s at 1.
    static let defaultPace = 0.15

    static func format(_ value: Double) -> String { String(format: "%.1f", value) }
}
