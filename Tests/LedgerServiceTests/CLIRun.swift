import Foundation
@testable import ledger
import LedgerCore
import LedgerPostgres
@testable import LedgerService
import LedgerTestSupport
import Synchronization
import Testing

/// Runs the `ledger` command in-process against a test database, capturing its output.
final class CLIRun: Sendable {
    let lines = Mutex<[String]>([])
    let errors = Mutex<[String]>([])

    func callAsFunction(_ arguments: [String], env: [String: String]) -> Int32 {
        var cli = LedgerCLI(environment: env.merging(["LEDGER_MIGRATIONS": TestDatabase.migrationsDirectory]) { a, _ in a },
                            executablePath: "/nonexistent/ledger")
        cli.output = { line in self.lines.withLock { $0.append(line) } }
        cli.errorOutput = { line in self.errors.withLock { $0.append(line) } }
        return cli.run(arguments)
    }

    var output: [String] { lines.withLock { $0 } }
    var errorLines: [String] { errors.withLock { $0 } }
}
