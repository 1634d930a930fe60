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
                  Exits 1 naming the first broken position or each difference.
                """ + "\n" + VerifyCheckpoints.usage)
            return 0
        }
        try args.allowOnly(flags: ["help"])
        let checkpoints = try VerifyCheckpoints.paths(args)
        let report = try Verification().run(on: cli.connect())
        cli.output("hash chain intact: \(report.events) events, head position \(report.head)")
        if let checkpoints { try VerifyCheckpoints(cli: cli).run(paths: checkpoints, publicKeyFile: args.value("public-key")) }
        if let first = report.differences.first {
            for d in report.differences.dropFirst() { cli.output("difference: " + d) }
            throw MaintenanceError.readModelsDiffer(count: report.differences.count, first: first)
        }
        cli.output("read models match a replay of the events")
        return 0
    }
}
