import Foundation
import LedgerService

/// operations.md's default for `DATABASE_URL`: the private cluster `Ops/run` starts
/// under `.ledger/` (its port in `.ledger/port`). Looked for in `LEDGER_STATE` when that
/// is set, else in `./.ledger`, else beside the executable's project folder (for
/// `.build/release/ledger`).
enum PrivateCluster {
    /// Whom the default connects as: the cluster's owner (migrations, tokens, audits),
    /// or the service's least-privileged role, as `Ops/run` serves.
    enum Role: String {
        case owner = "postgres"
        case service = "ledger_service"
    }

    static func defaultURL(environment: [String: String], executablePath: String, role: Role) -> String? {
        for directory in stateDirectories(environment: environment, executablePath: executablePath) {
            guard let text = try? String(contentsOfFile: directory + "/port", encoding: .utf8),
                  let port = Int(text.trimmingCharacters(in: .whitespacesAndNewlines)), (1...65535).contains(port) else { continue }
            return "postgresql://\(role.rawValue)@127.0.0.1:\(port)/ledger"
        }
        return nil
    }

    private static func stateDirectories(environment: [String: String], executablePath: String) -> [String] {
        if let state = environment["LEDGER_STATE"], !state.isEmpty { return [state] }
        var directories = [FileManager.default.currentDirectoryPath + "/.ledger"]
        var url = URL(fileURLWithPath: executablePath).resolvingSymlinksInPath().deletingLastPathComponent()
        for _ in 0..<4 {
            url = url.deletingLastPathComponent()
            directories.append(url.path + "/.ledger")
        }
        return directories
    }
}
