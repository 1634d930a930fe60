

/// `ledger migrate [--status]`.
struct MigrateCommand {
    let cli: LedgerCLI

    func run(_ words: [String]) throws {
        let args = try Arguments(words, valued: [])
        if args.has("help") {
            cli.output("usage: ledger migrate [--status]\n  Applies Migrations/*.sql in order, each once, in a transaction; refuses a changed migration.\n  --status lists applied and pending migrations.")
            return
        }
        try args.allowOnly(flags: ["status", "help"])
        try args.refuseWords("migrate")
        let configuration = try cli.configuration()
        let migrator = try cli.migrator(configuration)
        let connection = try cli.connect(configuration)
        if args.has("status") {
            let status = try migrator.status(connection)
            for (name, at) in status.applied { cli.output("applied  \(name)  \(at)") }
            for name in status.pending { cli.output("pending  \(name)") }
            cli.output(status.isCurrent ? "up to date" : "\(status.pending.count) pending")
        } else {
            let applied = try migrator.migrate(connection)
            for name in applied { cli.output("applied \(name)") }
            cli.output(applied.isEmpty ? "already up to date" : "applied \(applied.count) migration(s)")
        }
    }
}
