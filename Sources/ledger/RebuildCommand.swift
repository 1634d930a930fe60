import LedgerService

/// `ledger rebuild`: parse, rebuild, print.
struct RebuildCommand {
    let cli: LedgerCLI

    func run(_ words: [String]) throws -> Int32 {
        let args = try Arguments(words, valued: [])
        if args.has("help") {
            cli.output("usage: ledger rebuild\n  Rebuilds the read models (ledger.orders, ledger.enrollments) from ledger.events, atomically.")
            return 0
        }
        try args.allowOnly(flags: ["help"])
        let count = try Rebuild().run(on: cli.connect())
        cli.output("rebuilt the read models from \(count) events")
        return 0
    }
}
