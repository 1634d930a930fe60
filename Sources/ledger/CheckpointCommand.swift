import LedgerAPI
import LedgerService

/// `ledger checkpoint`: signs the current head, stores the note, prints it.
struct CheckpointCommand {
    let cli: LedgerCLI

    func run(_ words: [String]) throws -> Int32 {
        let args = try Arguments(words, valued: [])
        if args.has("help") {
            cli.output("""
                usage: ledger checkpoint
                  Signs the chain's head with LEDGER_CHECKPOINT_KEY as a C2SP signed note (origin
                  LEDGER_CHECKPOINT_ORIGIN), stores it in ledger.signed_checkpoints, writes it to
                  LEDGER_CHECKPOINT_DIR as <position>.checkpoint when set, and prints it. When the
                  head has not moved since the newest note, prints that note instead. The chain is walked
                  from the newest note this key stored to the head first: signs nothing, exit 1, when it
                  no longer reaches the head from that note.
                """)
            return 0
        }
        try args.allowOnly(flags: ["help"])
        try args.refuseWords("checkpoint")
        // The key first: without one, that is the one line, whatever else is missing.
        _ = try CheckpointSigner.required(LedgerConfiguration.checkpointsFromEnvironment(cli.environment))
        let configuration = try cli.configuration()
        let signer = try CheckpointSigner.required(configuration.service.checkpoints)
        switch try signer.checkpoint(on: cli.connect(configuration)) {
        case .signed(let checkpoint):
            cli.output(String(checkpoint.note.text.dropLast()))   // output adds the last LF
        case .unstored(let checkpoint):
            cli.errorOutput("ledger: ledger.signed_checkpoints already holds a row for position \(checkpoint.body.position) that this key "
                + "did not sign (a retired key's note, or one written outside the ledger): the note is printed"
                + " and written to LEDGER_CHECKPOINT_DIR when set (unless a note of another key is there), but not stored")
            cli.output(String(checkpoint.note.text.dropLast()))
        case .unchanged(let stored):
            cli.errorOutput("ledger: the head has not moved since the note at position \(stored.position): printing that note")
            cli.output(String(stored.note.dropLast()))
        case .empty:
            throw CLIError.failed("the ledger is empty: an empty ledger has no checkpoint", exitCode: 1)
        }
        return 0
    }
}
