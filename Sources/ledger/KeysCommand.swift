import LedgerAPI
import LedgerCore
import LedgerService

/// `ledger keys generate --out DIR`: a checkpoint signing key pair; the verifier key on the last line.
struct KeysCommand {
    let cli: LedgerCLI

    func run(_ words: [String]) throws -> Int32 {
        let args = try Arguments(words, valued: ["out"])
        if args.has("help") || args.positional.first != "generate" {
            guard args.has("help") else { throw CLIError.usage("`ledger keys generate --out DIR` is the one keys command") }
            cli.output("""
                usage: ledger keys generate --out DIR
                  Writes DIR/checkpoint.key (the Ed25519 private key, PKCS#8 PEM, mode 0600) and
                  DIR/checkpoint.pub (SPKI PEM); never overwrites a key. Prints the verifier key
                  (LEDGER_CHECKPOINT_ORIGIN+key id+key) on its last line. Point LEDGER_CHECKPOINT_KEY
                  at checkpoint.key and give checkpoint.pub and the verifier key to auditors.
                """)
            return 0
        }
        try args.allowOnly(flags: ["help"])
        guard args.positional.count == 1 else { throw CLIError.usage("unexpected \(args.positional.dropFirst().joined(separator: " "))") }
        let directory = try args.required("out")
        let origin = try LedgerConfiguration.checkpointsFromEnvironment(cli.environment).origin
        let key = try CheckpointKeyFile.generate(into: directory)
        cli.output("wrote \(directory)/\(CheckpointKeyFile.privateName) (private, mode 0600) and \(directory)/\(CheckpointKeyFile.publicName)")
        cli.output(SignedNote.verifierKey(name: origin, publicKey: key.publicKey))
        return 0
    }
}
