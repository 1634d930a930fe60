import Foundation
import LedgerService

/// operations.md's default for `DATABASE_URL`: the private cluster `Ops/run` starts
/// under `.ledger/` (its port in `.ledger/port`). Looked for in `LEDGER_STATE` when that
/// is set, else in `./.ledger`, else beside the executable's project folder (for
/// `.build/release/ledger`).
public enum PrivateCluster {
    /// Whom the default connects as: the cluster's owner (migrations, tokens, audits),
    /// or the service's least-privileged role, as `Ops/run` serves.
    public enum Role: String, Sendable {
        case owner = "postgres"
        case service = "ledger_service"
    }

    public static func defaultURL(stateDirectory: String?, executablePath: String, role: Role) -> String? {
        for directory in stateDirectories(stateDirectory, executablePath: executablePath) {
            guard let text = try? String(contentsOfFile: directory + "/port", encoding: .utf8),
                  let port = Int(text.trimmingCharacters(in: .whitespacesAndNewlines)), (1...65535).contains(port) else { continue }
            return "postgresql://\(role.rawValue)@127.0.0.1:\(port)/ledger"
        }
        return nil
    }

    private static func stateDirectories(_ state: String?, executablePath: String) -> [String] {
        if let state { return [state] }
        var directories = [FileManager.default.currentDirectoryPath + "/.ledger"]
        var url = URL(fileURLWithPath: executablePath).resolvingSymlinksInPath().deletingLastPathComponent()
        for _ in 0..<4 {
            url = url.deletingLastPathComponent()
            directories.append(url.path + "/.ledger")
        }
        return directories
    }
}
