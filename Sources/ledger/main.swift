import Foundation
import LedgerService

// Argument parsing and nothing more: everything else lives in LedgerService.
// An argument that is not UTF-8 would reach the commands with U+FFFD in place of its bytes
// (a path naming another file than the one given): refused, as any usage mistake is.
for i in 1..<Int(CommandLine.argc) where CommandLine.unsafeArgv[i].map({ String(validatingCString: $0) == nil }) ?? false {
    FileHandle.standardError.write(Data("ledger: argument \(i) is not UTF-8 text; give paths and values in UTF-8\n".utf8))
    exit(64)
}
let cli = LedgerCLI(environment: ProcessInfo.processInfo.environment, executablePath: CommandLine.arguments[0])
exit(cli.run(Array(CommandLine.arguments.dropFirst())))
