import Foundation
import LedgerCore
import LedgerPostgres
import LedgerTestSupport
import Synchronization
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// The real `ledger serve` as a child process. Spawned with posix_spawn and
/// reaped with waitpid (Foundation's Process can hang off the main thread).
final class ServeProcess: @unchecked Sendable {
    // @unchecked: `pid` is immutable; `reaped` is only touched by the test's thread.
    let pid: pid_t
    let port: Int
    let log: String
    private var exitStatus: Int32?

    /// The `ledger` executable of this build: beside the test bundle, else the package's .build/debug.
    static func executable() throws -> String {
        var candidates: [String] = []
        if let exe = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe") {
            candidates.append(URL(fileURLWithPath: exe).deletingLastPathComponent().appendingPathComponent("ledger").path)
        }
        candidates.append(URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("ledger").path)
        var root = URL(fileURLWithPath: #filePath)
        while root.path != "/" && !FileManager.default.fileExists(atPath: root.appendingPathComponent("Package.swift").path) {
            root.deleteLastPathComponent()
        }
        candidates.append(root.appendingPathComponent(".build/debug/ledger").path)
        guard let found = candidates.first(where: { FileManager.default.isExecutableFile(atPath: $0) }) else {
            throw ClientError.io("no ledger executable in \(candidates): build the `ledger` product first")
        }
        return found
    }

    init(databaseURL: String, environment extra: [String: String] = [:]) throws {
        port = try freeLoopbackPort()
        log = NSTemporaryDirectory() + "ledger-serve-\(port).log"
        var environment = LedgerFixture.environment(databaseURL: databaseURL).merging(extra) { $1 }
        environment["LEDGER_LISTEN"] = "127.0.0.1:\(port)"
        environment["LEDGER_MIGRATIONS"] = TestDatabase.migrationsDirectory
        environment["PATH"] = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        let binary = try Self.executable()
        pid = try spawnLogged([binary, "serve"], environment: environment, log: log)
    }

    var logText: String { (try? String(contentsOfFile: log, encoding: .utf8)) ?? "" }

    /// True once /healthz answers 200; false if the child exits or `seconds` pass.
    func waitUntilServing(within seconds: Double) -> Bool {
        eventually(within: seconds, every: 0.05) {
            if hasExited { return false }
            return try HTTPClient(port: port, timeout: 2).get("/healthz").status == 200
        }
    }

    var hasExited: Bool {
        if exitStatus != nil { return true }
        var status: Int32 = 0
        if waitpid(pid, &status, WNOHANG) == pid { exitStatus = status; return true }
        return false
    }

    /// Sends `signal` and reaps the child; the wait status, or nil if it outlived `seconds`.
    @discardableResult
    func signal(_ signal: Int32, waitSeconds seconds: Double = 30) -> Int32? {
        if let exitStatus { return exitStatus }
        kill(pid, signal)
        let deadline = Date(timeIntervalSinceNow: seconds)
        while Date() < deadline {
            var status: Int32 = 0
            let r = waitpid(pid, &status, WNOHANG)
            if r == pid { exitStatus = status; return status }
            if r < 0 && errno != EINTR { return nil }
            usleep(20_000)
        }
        return nil
    }

    deinit {
        if !hasExited {
            kill(pid, SIGKILL)
            var status: Int32 = 0
            while waitpid(pid, &status, 0) == -1 && errno == EINTR {}
        }
        try? FileManager.default.removeItem(atPath: log)
    }
}
