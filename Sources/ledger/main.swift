import Foundation
import LedgerService

// Argument parsing and nothing more: everything else lives in LedgerService.
let cli = LedgerCLI(environment: ProcessInfo.processInfo.environment, executablePath: CommandLine.arguments[0])
exit(cli.run(Array(CommandLine.arguments.dropFirst())))
