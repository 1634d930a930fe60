import LedgerPostgres

/// `ledger verify`: walks the hash chain (and, once projections exist, compares
/// the read models with a fresh reduction). Exit 1 names the first difference.
struct VerifyCommand {
    let cli: LedgerCLI

    func run(_ words: [String]) throws -> Int32 {
        let args = try Arguments(words, valued: [])
        if args.has("help") {
            cli.output("usage: ledger verify\n  Checks every event's hash chain link; exits 1 naming the first broken position.")
            return 0
        }
        try args.allowOnly(flags: ["help"])
        let connection = try cli.connect()
        switch try ChainVerifier().verify(on: connection) {
        case .intact(let events, let head):
            cli.output("hash chain intact: \(events) events, head position \(head)")
            return 0
        case .broken(let position, let reason):
            throw CLIError.failed("hash chain broken at position \(position): \(reason)", exitCode: 1)
        }
    }
}
