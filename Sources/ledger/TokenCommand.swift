import LedgerCore
import LedgerService

/// `ledger token create|list|revoke`.
struct TokenCommand {
    let cli: LedgerCLI
    let issuer = TokenIssuer()

    static let help = """
        usage: ledger token create --role ROLE --name NAME [--ttl 30d]
               ledger token list
               ledger token revoke NAME
          Roles: ingest, support, auditor, accountant. The token is printed once, on the last line; only its hash is stored.
          --ttl takes a number with s, m, h or d (default: no expiry).
        """

    func run(_ words: [String]) throws {
        let args = try Arguments(words, valued: ["role", "name", "ttl"])
        if args.has("help") || args.positional.isEmpty {
            cli.output(Self.help)
            if args.positional.isEmpty && !args.has("help") { throw CLIError.usage("token needs create, list or revoke") }
            return
        }
        try args.allowOnly(flags: ["help"])
        let command = args.positional[0]
        if command != "revoke", args.positional.count > 1 {
            throw CLIError.usage("ledger token \(command) takes no words besides its options: unexpected \(args.positional.dropFirst().joined(separator: " "))")
        }
        switch command {
        case "create":
            let roleText = try args.required("role")
            guard let role = Role(rawValue: roleText), role != .client else {
                throw CLIError.usage("--role must be one of ingest, support, auditor, accountant (client tokens are minted per order over HTTP)")
            }
            let name = try args.required("name")
            guard name.utf8.count <= 128, name.allSatisfy({ $0.isLetter || $0.isNumber || "-_.:@".contains($0) }) else {
                throw CLIError.usage("--name must be 1-128 letters, digits or - _ . : @")
            }
            let expires = try args.value("ttl").map { Timestamp(microseconds: Timestamp.now().microseconds + (try Self.seconds($0)) * 1_000_000) }
            let token = try issuer.create(role: role, name: name, expiresAt: expires, on: cli.connect())
            cli.output("created \(role.rawValue) token \(name)" + (expires.map { ", expires \($0.rfc3339)" } ?? ", no expiry"))
            cli.output(token)
        case "list":
            let now = Timestamp.now()
            for t in try issuer.store.list(on: cli.connect()) {
                let state = t.revokedAt != nil ? "revoked" : (t.isValid(at: now) ? "active" : "expired")
                var line = "\(t.name)\t\(t.role)\t\(state)\tcreated \(t.createdAt.rfc3339)"
                if let e = t.expiresAt { line += "\texpires \(e.rfc3339)" }
                if let o = t.orderNo { line += "\torder \(o)" }
                if let r = t.enrollmentRef { line += "\tenrollment \(r)" }
                cli.output(line)
            }
        case "revoke":
            guard args.positional.count == 2 else { throw CLIError.usage("token revoke takes one NAME") }
            try issuer.store.revoke(name: args.positional[1], on: cli.connect())
            cli.output("revoked \(args.positional[1])")
        default:
            throw CLIError.usage("unknown token command \(args.positional[0])")
        }
    }

    /// "30d", "12h", "15m", "90s" or plain seconds.
    static func seconds(_ text: String) throws -> Int64 {
        let units: [Character: Int64] = ["s": 1, "m": 60, "h": 3600, "d": 86_400]
        var digits = Substring(text)
        var unit: Int64 = 1
        if let last = text.last, let u = units[last] {
            unit = u
            digits = text.dropLast()
        }
        guard let n = Int64(digits), n > 0, n <= 3650 * 86_400 / unit else {
            throw CLIError.usage("--ttl \(text) is not a duration like 30d, 12h, 15m or 90s")
        }
        return n * unit
    }
}
