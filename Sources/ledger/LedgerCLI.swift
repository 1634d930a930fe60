import LedgerAPI
import Foundation
import LedgerCore
import LedgerHTTP
import LedgerPostgres
import LedgerService

/// The `ledger` command: dispatches to one subcommand, turns every error into
/// one line on stderr and an exit code (2 for configuration and an unreachable
/// database, 1 for a failed verification, 64 for a usage mistake).
public struct LedgerCLI {
    public let environment: [String: String]
    public let executablePath: String
    public var output: (String) -> Void = { print($0) }
    /// Where the one-line error goes (stderr; tests capture it).
    public var errorOutput: (String) -> Void = { FileHandle.standardError.write(Data(($0 + "\n").utf8)) }

    public init(environment: [String: String], executablePath: String) {
        self.environment = environment
        self.executablePath = executablePath
    }

    static let usage = """
        usage: ledger <command> [options]

          migrate [--status]                      apply Migrations/*.sql, or list applied and pending
          serve                                   the HTTP API (read models kept in each write's commit)
          token create --role R --name N [--ttl 30d]   print a new token on its last line
          token list | token revoke NAME          manage tokens
          replay --order NO [--as-of TIME] [--json]    an order's history, event by event
          verify [--retired-keys ID,...] [--checkpoints PATH... [--public-key FILE]]
                                                  check the hash chain, signatures, the read models and signed checkpoints
          rebuild                                 rebuild the read models from the events
          export orders|events --from T --to T [--format csv|jsonl] [--out FILE]   accounting exports
          poll --once                             one pass of the web3 poller over the orders that are due
          quarantine prune --before TIME          delete old rejected deliveries and give their space back
          keys generate --out DIR                 a checkpoint signing key pair; the verifier key on the last line
          checkpoint                              sign the chain's head as a checkpoint note and print it
          verify-export FILE [--public-key FILE]  check an export against its manifest and the manifest's notes

        Configuration comes from the environment (DATABASE_URL, LEDGER_*); docs/operations.md lists every variable.
        Every command takes --help.
        """

    public func run(_ arguments: [String]) -> Int32 {
        do {
            guard let command = arguments.first else {
                errorOutput("ledger: no command given; `ledger --help` lists them (migrate, serve, token, replay, verify, rebuild, export, poll, quarantine, keys, checkpoint, verify-export)")
                return 64
            }
            guard command != "--help", command != "-h", command != "help" else {
                output(Self.usage)
                return 0
            }
            let rest = Array(arguments.dropFirst())
            switch command {
            case "migrate": try MigrateCommand(cli: self).run(rest)
            case "token": try TokenCommand(cli: self).run(rest)
            case "verify": return try VerifyCommand(cli: self).run(rest)
            case "serve": return try ServeCommand(cli: self).run(rest)
            case "rebuild": return try RebuildCommand(cli: self).run(rest)
            case "replay": return try ReplayCommand(cli: self).run(rest)
            case "export": return try ExportCommand(cli: self).run(rest)
            case "poll": return try PollCommand(cli: self).run(rest)
            case "quarantine": return try QuarantineCommand(cli: self).run(rest)
            case "keys": return try KeysCommand(cli: self).run(rest)
            case "checkpoint": return try CheckpointCommand(cli: self).run(rest)
            case "verify-export": return try VerifyExportCommand(cli: self).run(rest)
            default:
                if let extra = extraCommands[command] { return try extra(self, rest) }
                throw CLIError.usage("unknown command \(command)")
            }
            return 0
        } catch {
            let (message, code) = Self.describe(error)
            errorOutput("ledger: " + Self.oneLine(message))
            return code
        }
    }

    /// Commands registered by later layers (serve, replay, export...).
    public var extraCommands: [String: (LedgerCLI, [String]) throws -> Int32] = [:]

    /// `message` on one line: a message that quotes something with line breaks in it (a
    /// query text, a note) has each break made ` / `.
    static func oneLine(_ message: String) -> String {
        guard message.contains(where: \.isNewline) else { return message }
        return message.split(whereSeparator: \.isNewline).map { $0.trimmingCharacters(in: .whitespaces) }
            .filter { !$0.isEmpty }.joined(separator: " / ")
    }

    static func describe(_ error: Error) -> (String, Int32) {
        switch error {
        case let e as CLIError: return (e.description, e.exitCode)
        case let e as ConfigurationError: return (e.description, 2)
        case let e as PostgresError:
            switch e {
            case .invalidConnectionString, .connectionFailed, .connectionLost, .poolExhausted: return (e.description, 2)
            default: return (e.description, 1)
            }
        case let e as MigrationError: return (e.description, 1)
        case let e as MaintenanceError: return (e.description, 1)
        case let e as ChainBreak: return (e.description, 1)
        case let e as TokenStoreError: return (e.description, 1)
        case let e as HTTPServerError: return (e.description, 2)
        case let e as KeyFileError: return (e.description, 1)
        case let e as CheckpointError: return (e.description, 1)
        case let e as CheckpointVerificationError: return (e.description, 1)
        case let e as ExportVerificationError: return (e.description, 1)
        default: return (String(describing: error), 1)
        }
    }

    // MARK: shared helpers for commands

    /// The configuration, read from the environment; without `DATABASE_URL`, the private
    /// cluster of `Ops/run` as `role` (operations.md).
    func configuration(as role: PrivateCluster.Role = .owner) throws -> LedgerConfiguration {
        try LedgerConfiguration.fromEnvironment(environment, executablePath: executablePath, role: role)
    }

    /// A single connection for a one-shot command; reports an unreachable server plainly.
    func connect(_ configuration: LedgerConfiguration) throws -> PostgresConnection {
        try PostgresConnection(connectionString: configuration.databaseURL)
    }

    /// A single connection, configured from the environment, for commands that need nothing else.
    func connect() throws -> PostgresConnection {
        try connect(configuration())
    }

    func migrator(_ configuration: LedgerConfiguration) throws -> Migrator {
        guard let dir = Migration.locateDirectory(explicit: configuration.migrationsDirectory, executablePath: executablePath) else {
            throw CLIError.failed("cannot find the Migrations/ directory: run from the project folder or set LEDGER_MIGRATIONS", exitCode: 2)
        }
        var isFolder: ObjCBool = false
        guard FileManager.default.fileExists(atPath: dir, isDirectory: &isFolder), isFolder.boolValue else {
            throw CLIError.failed("LEDGER_MIGRATIONS names \(dir), which is not a folder", exitCode: 2)
        }
        return Migrator(migrations: try Migration.load(from: dir))
    }
}
