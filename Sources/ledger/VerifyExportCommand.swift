import LedgerAPI
import LedgerService

/// `ledger verify-export FILE [--public-key FILE]`: the file against its manifest, and the
/// manifest's notes against the key; exit 1 naming what differs.
struct VerifyExportCommand {
    let cli: LedgerCLI

    func run(_ words: [String]) throws -> Int32 {
        let args = try Arguments(words, valued: ["public-key"])
        if args.has("help") {
            cli.output("""
                usage: ledger verify-export FILE [--public-key FILE]
                  Checks FILE's SHA-256 against FILE.manifest.json, the manifest's `signature` note (its kind, from,
                  to, format, rows, sha256 and highestPosition as signed) and its `checkpoint` note, under
                  --public-key (default: LEDGER_CHECKPOINT_KEY's public half). Needs no database.
                """)
            return 0
        }
        try args.allowOnly(flags: ["help"])
        guard args.positional.count == 1 else { throw CLIError.usage("name one export file") }
        let file = args.positional[0]
        let publicKey = try VerifyCheckpoints.publicKey(
            file: args.value("public-key"), keyPath: try LedgerConfiguration.checkpointsFromEnvironment(cli.environment).keyPath)
        let problems = try ExportVerification.problems(file: file, publicKey: publicKey)
        if let first = problems.first {
            for problem in problems { cli.output("differs: " + problem) }
            throw ExportVerificationError.differs(count: problems.count, first: first)
        }
        cli.output("\(file) is the export its manifest describes, and both notes verify")
        return 0
    }
}
