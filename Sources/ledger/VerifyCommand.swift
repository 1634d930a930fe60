import LedgerPostgres
import LedgerService

/// `ledger verify`: walks every event, checking the hash chain, re-runs the
/// reducer and compares the result with the read models. Exit 1 names the
/// first broken position, or every read-model difference.
struct VerifyCommand {
    let cli: LedgerCLI

    func run(_ words: [String]) throws -> Int32 {
        let args = try Arguments(words, valued: [])
        if args.has("help") {
            cli.output("""
                usage: ledger verify
                  Checks every event's hash-chain link, re-runs the reducer over all events and compares
                  the result with ledger.orders (every column and both documents) and ledger.enrollments.
                  Exits 1 naming the first broken position or each difference.
                """)
            return 0
        }
        try args.allowOnly(flags: ["help"])
        let connection = try cli.connect()
        let check = ReadModelCheck()
        // One snapshot for the walk and the comparison, so concurrent appends don't read as differences.
        return try connection.transaction { c in
            try c.query("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
            switch try ChainVerifier().verify(on: c) {
            case .broken(let position, let reason):
                throw CLIError.failed("hash chain broken at position \(position): \(reason)", exitCode: 1)
            case .intact(let events, let head):
                cli.output("hash chain intact: \(events) events, head position \(head)")
            }
            let differences = try check.differences(on: c)
            if let first = differences.first {
                for d in differences.dropFirst() { cli.output("difference: " + d) }
                throw CLIError.failed("read models differ from the events: \(differences.count) difference(s); first: \(first)", exitCode: 1)
            }
            cli.output("read models match a replay of the events")
            return 0
        }
    }
}
