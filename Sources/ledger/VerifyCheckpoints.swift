import Foundation
import LedgerAPI
import LedgerCore
import LedgerPostgres
import LedgerService

/// `ledger verify --checkpoints PATH... [--public-key FILE]`: the notes' part of verify,
/// kept beside VerifyCommand so that command stays a list of steps.
struct VerifyCheckpoints {
    let cli: LedgerCLI

    static let valued: Set<String> = ["checkpoints", "public-key"]
    static let usage = """
          --checkpoints PATH... also checks every note in these .checkpoint files or folders: its signature
                                verifies under --public-key FILE (default: LEDGER_CHECKPOINT_KEY's public half)
                                and the chain's hash at its position equals the note's; names each note that fails.
        """

    /// Nil when `--checkpoints` was not given: the paths are its value and the words after it.
    static func paths(_ args: Arguments) throws -> [String]? {
        guard let first = args.value("checkpoints") else {
            if !args.positional.isEmpty { throw CLIError.usage("unexpected \(args.positional.joined(separator: " "))") }
            if args.value("public-key") != nil { throw CLIError.usage("--public-key goes with --checkpoints") }
            return nil
        }
        return [first] + args.positional
    }

    let publicKey: Ed25519PublicKey
    let files: [CheckpointVerification.NoteFile]

    /// Reads the public key and the notes' files before the log is scanned, so that a wrong
    /// path or a missing key is told at once. `keyPath` is `LEDGER_CHECKPOINT_KEY` as the
    /// configuration read it.
    init(cli: LedgerCLI, paths: [String], publicKeyFile: String?, keyPath: String?) throws {
        self.cli = cli
        publicKey = try Self.publicKey(file: publicKeyFile, keyPath: keyPath)
        files = try CheckpointVerification.files(paths)
    }

    /// Checks every note against the chain, on the connection (and in the snapshot) verify
    /// walked the chain in; `report` prints what it found.
    func check(on connection: PostgresConnection) throws -> CheckpointVerification.Report {
        let showProgress = isatty(STDERR_FILENO) == 1
        let files = self.files
        let report = try CheckpointVerification(publicKey: publicKey).run(files, on: connection) { notes in
            if showProgress { FileHandle.standardError.write(Data("\rledger verify: \(notes) of \(files.count) notes checked".utf8)) }
        }
        if showProgress { FileHandle.standardError.write(Data("\n".utf8)) }
        return report
    }

    /// Prints each failing note; returns how many notes were checked and, when any fails,
    /// the line that says so.
    func report(_ report: CheckpointVerification.Report) -> (notes: Int, failure: String?) {
        guard let first = report.failures.first else {
            cli.output("checkpoints match the chain: \(report.notes) notes verify")
            return (report.notes, nil)
        }
        for failure in report.failures { cli.output("checkpoint fails: " + failure) }
        return (report.notes, CheckpointVerificationError.notesFail(count: report.failures.count, first: first).description)
    }

    /// `--public-key FILE`, else the public half of `LEDGER_CHECKPOINT_KEY` (audit.md, *Verifying*).
    static func publicKey(file: String?, keyPath: String?) throws -> Ed25519PublicKey {
        if let file { return try CheckpointKeyFile.loadPublic(path: file) }
        guard let keyPath else {
            throw CLIError.usage("give --public-key FILE, or set LEDGER_CHECKPOINT_KEY to derive it from")
        }
        return try CheckpointKeyFile.load(path: keyPath).publicKey
    }
}
