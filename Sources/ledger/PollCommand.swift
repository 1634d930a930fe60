import LedgerAPI
import LedgerObservability
import LedgerService

/// `ledger poll --once` (operations.md): one pass of the poller over every order that is
/// due, then exit. An order never polled is due at once.
struct PollCommand {
    let cli: LedgerCLI

    func run(_ words: [String]) throws -> Int32 {
        let args = try Arguments(words, valued: [])
        if args.has("help") {
            cli.output("""
                usage: ledger poll --once
                  Asks the web3 gateway (LEDGER_WEB3_API_BASE, with the first of LEDGER_WEB3_API_KEYS) about every
                  order that is due: web3 orders not paid or expired, created within the last 7 days, never polled or
                  whose next poll time has come (30 s after a poll, doubling to 30 minutes). Each answer is recorded as
                  a query observation. Prints how many were polled, recorded and failed; exit 1 when any failed.
                  `ledger serve` runs the same passes every 5 s.
                """)
            return 0
        }
        try args.allowOnly(flags: ["help", "once"])
        guard args.has("once"), args.positional.isEmpty else {
            throw CLIError.usage("ledger poll takes --once (ledger serve polls continuously)")
        }
        let configuration = try cli.configuration().service
        guard configuration.web3APIBase != nil else {
            throw CLIError.failed("polling is off: set LEDGER_WEB3_API_BASE to the gateway's base URL", exitCode: 2)
        }
        guard let summary = try PollOnce().run(configuration, logger: Logger(minimumLevel: .warning)) else { return 2 }
        cli.output("polled \(summary.polled) order(s): \(summary.recorded) observation(s) recorded, \(summary.failed) failed")
        return summary.failed == 0 ? 0 : 1
    }
}
