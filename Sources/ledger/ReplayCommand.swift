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
                  after it. --as-of stops at events recorded up to TIME
                  (RFC 3339 or a date). --json prints one JSON object per event, then the final state.
                """)
            return 0
        }
        try args.allowOnly(flags: ["help", "json"])
        let no: MerchantOrderNo
        do { no = try MerchantOrderNo(stored: try args.required("order")) } catch let e as CoreError {
            throw CLIError.usage("--order: \(e.message)")
        }
        var asOf: Timestamp?
        if let text = args.value("as-of") {
            guard let t = Timestamp.parse(text, lenient: true) else { throw CLIError.usage("--as-of \(text) is not an RFC 3339 time or a date") }
            asOf = t
        }
        let stored = try EventStore().read(stream: no.stream, on: cli.connect()).filter { asOf == nil || $0.recordedAt <= asOf! }
        guard !stored.isEmpty else { throw CLIError.failed("no events for order \(no.value)", exitCode: 1) }
        var state = OrderState(merchantOrderNo: no)
        var rows: [String] = []
        for event in stored {
            let recorded = try EventMapping.recorded(event)
            OrderState.reduce(into: &state, recorded)
            let metadata = try JSONValue.parse(stored: event.metadataJSON)
            let verifiedBy = metadata["verifiedBy"]?.stringValue ?? "unknown"
            if args.has("json") {
                rows.append(JSONSerializer.string(.object([
                    ("position", .integer(event.position)), ("eventId", .string(event.eventID)),
                    ("type", .string(event.type)), ("source", .string(event.source)),
                    ("recordedAt", .string(event.recordedAt.rfc3339)), ("observedAt", .string(event.observedAt.rfc3339)),
                    ("verifiedBy", .string(verifiedBy)), ("hash", .string(Hex.encode(event.hash))),
                    ("payload", try JSONValue.parse(stored: event.payloadJSON)),
                    ("statusAfter", .integer(state.status.rawValue)),
                ])))
            } else {
                rows.append("#\(event.position)  recorded \(event.recordedAt.rfc3339)  observed \(event.observedAt.rfc3339)  \(event.source)/\(event.type)  verified by \(verifiedBy)  → \(state.status.rawValue) \(state.statusName)\(state.attention ? " (attention)" : "")")
            }
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
        cli.output("events    \(stored.count)")
        cli.output("")
        rows.forEach(cli.output)
        return 0
    }
}
