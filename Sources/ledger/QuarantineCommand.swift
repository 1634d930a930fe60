import LedgerCore
import LedgerPostgres
import LedgerService

/// `ledger quarantine prune --before TIME`: parse, prune, print. Beyond operations.md's
/// table: the quarantine is operational evidence, not history, and its size budget
/// (`LEDGER_QUARANTINE_MAX_BYTES`) needs room again after a flood.
struct QuarantineCommand {
    let cli: LedgerCLI

    func run(_ words: [String]) throws -> Int32 {
        let args = try Arguments(words, valued: ["before"])
        if args.has("help") {
            cli.output("""
                usage: ledger quarantine prune --before TIME
                  Deletes the rejected deliveries received before TIME (a date, 00:00 UTC, or an RFC 3339 time with its offset), then
                  rewrites the table (VACUUM FULL) so its size, which the quarantine's budget measures, shrinks. The
                  rewrite locks the quarantine for its duration: deliveries refused meanwhile wait for it.
                  Archive what you must keep first (for example with psql's \\copy).
                """)
            return 0
        }
        try args.allowOnly(flags: ["help"])
        guard args.positional == ["prune"] else { throw CLIError.usage("ledger quarantine takes one action: prune --before TIME") }
        let text = try args.required("before")
        guard let before = TimeBound.parse(text) else { throw CLIError.usage("--before \(text) is not \(TimeBound.forms)") }
        guard before.microseconds <= Timestamp.now().microseconds else {
            throw CLIError.usage("--before \(before.rfc3339) is in the future: it would delete deliveries not yet received")
        }
        let connection = try cli.connect()
        defer { connection.close() }
        let outcome = try QuarantinePrune().run(before: before, on: connection)
        cli.output("deleted \(outcome.deleted) rejected deliveries received before \(before.rfc3339); the quarantine went from \(outcome.bytesBefore) to \(outcome.bytesAfter) bytes")
        return 0
    }
}
