import Foundation
import LedgerPostgres

/// A PostgreSQL cluster of the test's own, on a free loopback port, that the
/// test may stop and restart without disturbing any other test. Runs as the
/// `postgres` user when the tests run as root (PostgreSQL refuses root).
public final class ScratchCluster: @unchecked Sendable {
    // @unchecked: immutable after init; start/stop are called by one test.
    public let directory: String
    public let port: Int
    private static let bin = "/usr/lib/postgresql/15/bin"

    public init() throws {
        let dir = NSTemporaryDirectory() + "ledger-scratch-\(UInt32.random(in: 0...UInt32.max))"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        directory = dir
        port = try freeLoopbackPort()
        if getuid() == 0 { try Self.run(["/bin/chown", "postgres:postgres", dir]) }
        try asOwner(["\(Self.bin)/initdb", "-D", dir + "/data", "-U", "postgres", "-A", "trust", "-E", "UTF8", "--locale=C.UTF-8"])
        try start()
        let admin = try PostgresConnection(connectionString: "host=127.0.0.1 port=\(port) user=postgres dbname=postgres")
        try admin.query("CREATE DATABASE ledger")
        admin.close()
    }

    public var url: String { "postgresql://postgres@127.0.0.1:\(port)/ledger" }

    public func start() throws {
        try asOwner(["\(Self.bin)/pg_ctl", "-D", directory + "/data", "-l", directory + "/data/server.log", "-w",
                     "-o", "-p \(port) -k /tmp -c listen_addresses=127.0.0.1 -c fsync=off", "start"])
    }

    public func stop() throws {
        try asOwner(["\(Self.bin)/pg_ctl", "-D", directory + "/data", "-m", "immediate", "-w", "stop"])
    }

    public func destroy() {
        try? stop()
        try? FileManager.default.removeItem(atPath: directory)
    }

    private func asOwner(_ command: [String]) throws {
        if getuid() == 0 {
            try Self.run(["/usr/sbin/runuser", "-u", "postgres", "--"] + command)
        } else {
            try Self.run(command)
        }
    }

    /// posix_spawn + waitpid: Foundation's Process.waitUntilExit can miss the
    /// child's exit when called off the main thread, and hang.
    static func run(_ command: [String]) throws {
        var pid: pid_t = 0
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
        let argv = command.map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        let spawned = posix_spawn(&pid, command[0], &actions, nil, argv, environ)
        guard spawned == 0 else { throw PostgresError.connectionFailed("cannot run \(command[0]): errno \(spawned)") }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) == -1 && errno == EINTR {}
        let exited = (status & 0x7f) == 0
        let code = (status >> 8) & 0xff
        guard exited && code == 0 else {
            throw PostgresError.connectionFailed("\(command.joined(separator: " ")) failed (status \(status))")
        }
    }
}
