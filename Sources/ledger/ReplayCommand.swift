import LedgerCore
import LedgerPostgres
import LedgerService

/// `ledger replay --order NO [--as-of TIME] [--json]`: an order's history for
/// an auditor, every event with its source, verification and the state after it.
struct ReplayCommand {
    let cli: LedgerCLI

    func run(_ words: [String]) throws -> Int32 {
        let args = try Arguments(words, valued: ["order", "as-of"])
        if args.has("help") {
            cli.output("""
                usage: ledger replay --order NO [--as-of TIME] [--json]
                  Prints the order (number, provider, status, paid, how many events), then every event in ledger
                  order: position, recorded and observed times, source, type, how it was verified, and the status
                  after it. --as-of stops at events recorded up to TIME (a date, 00:00 UTC, or an RFC 3339
                  time with its offset, to the microsecond at most). --json prints one JSON object per event (with
                  the order's whole state after it, `stateAfter`), then the final state.
                """)
            return 0
        }
        try args.allowOnly(flags: ["help", "json"])
        try args.refuseWords("replay")
        let no: MerchantOrderNo
        do { no = try MerchantOrderNo(stored: try args.required("order")) } catch let e as CoreError {
            throw CLIError.usage("--order: \(e.message)")
        }
        var asOf: Timestamp?
        if let text = args.value("as-of") {
            guard let t = TimeBound.parse(text) else { throw CLIError.usage("--as-of \(text) is not \(TimeBound.forms)") }
            asOf = t
        }
        let steps = try Replay().run(no, asOf: asOf, on: cli.connect())
        guard let last = steps.last else { throw CLIError.failed("no events for order \(no.value)", exitCode: 1) }
        let state = last.stateAfter
        let rows: [String] = steps.map { step in
            let event = step.event, after = step.stateAfter
            if args.has("json") {
                return JSONSerializer.string(.object([
                    ("position", .integer(event.position)), ("eventId", .string(event.eventID)),
                    ("type", .string(event.type)), ("source", .string(event.source)),
                    ("recordedAt", .string(event.recordedAt.rfc3339)), ("observedAt", .string(event.observedAt.rfc3339)),
                    ("verifiedBy", .string(step.verifiedBy)), ("hash", .string(Hex.encode(event.hash))),
                    ("payload", step.payload),
                    ("statusAfter", .integer(after.status.rawValue)), ("stateAfter", after.toJSON()),
                ]))
            }
            return "#\(event.position)  recorded \(event.recordedAt.rfc3339)  observed \(event.observedAt.rfc3339)  \(event.source)/\(event.type)  verified by \(step.verifiedBy)  → \(after.status.rawValue) \(after.statusName)\(after.attention ? " (attention)" : "")"
        }
        if args.has("json") {
            rows.forEach(cli.output)
            cli.output(JSONSerializer.string(state.toJSON()))
            return 0
        }
        // A report: what the order is now (or was at --as-of), then how it got there.
        let asOfNote = asOf.map { " (as of \($0.rfc3339))" } ?? ""
        cli.output("order     \(no.value)")
        cli.output("provider  \(state.provider ?? "unknown")")
        cli.output("status    \(state.status.rawValue) \(state.statusName)\(asOfNote)\(state.attention ? ", needs attention" : "")")
        cli.output("paid      \(state.paid ? "yes" : "no")")
        cli.output("events    \(steps.count)")
        cli.output("")
        rows.forEach(cli.output)
        return 0
    }
}
