import LedgerCore
import LedgerPostgres

/// `ledger quarantine prune --before TIME`: deletes the rejected deliveries received
/// before TIME and gives their space back, so the quarantine's size budget
/// (`LEDGER_QUARANTINE_MAX_BYTES`, measured on the table's size) has room again.
/// Beyond operations.md's table: the quarantine is operational evidence, not history.
struct QuarantineCommand {
    let cli: LedgerCLI

    func run(_ words: [String]) throws -> Int32 {
        let args = try Arguments(words, valued: ["before"])
        if args.has("help") {
            cli.output("""
                usage: ledger quarantine prune --before TIME
                  Deletes the rejected deliveries received before TIME (a date, 00:00 UTC, or an RFC 3339 time), then
                  rewrites the table (VACUUM FULL) so its size, which the quarantine's budget measures, shrinks. The
                  rewrite locks the quarantine for its duration: deliveries refused meanwhile wait for it.
                  Archive what you must keep first (for example with psql's \\copy).
                """)
            return 0
        }
        try args.allowOnly(flags: ["help"])
        guard args.positional == ["prune"] else { throw CLIError.usage("ledger quarantine takes one action: prune --before TIME") }
        let text = try args.required("before")
        guard let before = Timestamp.parse(text, lenient: true) else {
            throw CLIError.usage("--before \(text) is not a date (YYYY-MM-DD) or an RFC 3339 time")
        }
        guard before.microseconds <= Timestamp.now().microseconds else {
            throw CLIError.usage("--before \(before.rfc3339) is in the future: it would delete deliveries not yet received")
        }
        let connection = try cli.connect()
        defer { connection.close() }
        let deleted = try connection.transaction { c in
            try c.query("DELETE FROM ledger.quarantine WHERE received_at < ledger.from_micros($1)", [.int(before.microseconds)]).affectedRows
        }
        let size = { try connection.query("SELECT pg_total_relation_size('ledger.quarantine') AS bytes").int64(0, "bytes") }
        let sizeBefore = try size()
        try connection.query("VACUUM (FULL) ledger.quarantine")
        cli.output("deleted \(deleted) rejected deliveries received before \(before.rfc3339); the quarantine went from \(sizeBefore) to \(try size()) bytes")
        return 0
    }
}
