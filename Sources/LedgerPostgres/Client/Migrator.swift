import Foundation
import LedgerCore

/// One numbered SQL file from Migrations/.
public struct Migration: Sendable, Equatable {
    public let name: String
    public let sql: String
    public var checksum: String { Hex.encode(Crypto.sha256(Array(sql.utf8))) }

    public init(name: String, sql: String) {
        self.name = name
        self.sql = sql
    }

    /// Reads `NNN_name.sql` files in name order.
    public static func load(from directory: String) throws -> [Migration] {
        let names: [String]
        do {
            names = try FileManager.default.contentsOfDirectory(atPath: directory)
        } catch {
            throw MigrationError.directoryUnreadable(directory)
        }
        return try names.filter { $0.hasSuffix(".sql") }.sorted().map { name in
            guard let sql = FileManager.default.contents(atPath: directory + "/" + name).flatMap({ String(data: $0, encoding: .utf8) }) else {
                throw MigrationError.directoryUnreadable(directory + "/" + name)
            }
            return Migration(name: name, sql: sql)
        }
    }

    /// Finds Migrations/: `explicit` (LEDGER_MIGRATIONS) when given, else ./Migrations, else
    /// beside the package the executable was built in.
    public static func locateDirectory(explicit: String?, executablePath: String) -> String? {
        if let dir = explicit { return dir }
        var candidates = [FileManager.default.currentDirectoryPath + "/Migrations"]
        var url = URL(fileURLWithPath: executablePath).resolvingSymlinksInPath().deletingLastPathComponent()
        for _ in 0..<5 {
            candidates.append(url.path + "/Migrations")
            url = url.deletingLastPathComponent()
        }
        return candidates.first { FileManager.default.fileExists(atPath: $0) }
    }
}

public enum MigrationError: Error, CustomStringConvertible {
    case directoryUnreadable(String)
    case changedAfterApply(name: String, applied: String, now: String)
    case unknownApplied(String)
    case failed(name: String, PostgresError)

    public var description: String {
        switch self {
        case .directoryUnreadable(let d): return "cannot read migrations from \(d)"
        case .changedAfterApply(let name, let applied, let now):
            return "migration \(name) was changed after it was applied (checksum \(applied.prefix(12)) applied, \(now.prefix(12)) on disk): write a new migration instead"
        case .unknownApplied(let name): return "the database has migration \(name) applied, which is not in Migrations/"
        case .failed(let name, let error): return "migration \(name) failed: \(error)"
        }
    }
}

/// The state of each migration, for `ledger migrate --status` and /readyz.
public struct MigrationStatus: Sendable {
    public var applied: [(name: String, appliedAt: String)]
    public var pending: [String]
    public var isCurrent: Bool { pending.isEmpty }
}

/// Applies migrations in order, each once, each in its own transaction,
/// recording name and checksum; refuses when an applied file has changed.
public struct Migrator: Sendable {
    public let migrations: [Migration]

    public init(migrations: [Migration]) { self.migrations = migrations }

    static let bootstrap = """
        CREATE SCHEMA IF NOT EXISTS ledger;
        CREATE TABLE IF NOT EXISTS ledger.schema_migrations (
            name       text PRIMARY KEY,
            checksum   text NOT NULL,
            applied_at timestamptz NOT NULL DEFAULT now()
        )
        """

    /// Applies what is pending; returns the names applied.
    @discardableResult
    public func migrate(_ connection: PostgresConnection) throws -> [String] {
        // Serialize concurrent `ledger migrate` runs.
        try connection.query("SELECT pg_advisory_lock(7413002)")
        defer { _ = try? connection.query("SELECT pg_advisory_unlock(7413002)") }
        try connection.executeScript(Self.bootstrap)
        let applied = try appliedChecksums(connection)
        try checkUnchanged(applied)
        var done: [String] = []
        for migration in migrations where applied[migration.name] == nil {
            do {
                try connection.transaction { tx in
                    try tx.executeScript(migration.sql)
                    try tx.query("INSERT INTO ledger.schema_migrations (name, checksum) VALUES ($1, $2)",
                                 [.text(migration.name), .text(migration.checksum)])
                }
            } catch let error as PostgresError {
                throw MigrationError.failed(name: migration.name, error)
            }
            done.append(migration.name)
        }
        return done
    }

    public func status(_ connection: PostgresConnection) throws -> MigrationStatus {
        let exists = try connection.query("SELECT to_regclass('ledger.schema_migrations') IS NOT NULL AS present")
        guard try exists.bool(0, "present") else {
            return MigrationStatus(applied: [], pending: migrations.map(\.name))
        }
        let rows = try connection.query("SELECT name, checksum, to_char(applied_at AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"') AS applied_at FROM ledger.schema_migrations ORDER BY name")
        var applied: [(String, String)] = []
        var checksums: [String: String] = [:]
        for i in 0..<rows.count {
            let name = try rows.string(i, "name")
            applied.append((name, try rows.string(i, "applied_at")))
            checksums[name] = try rows.string(i, "checksum")
        }
        try checkUnchanged(checksums)
        return MigrationStatus(applied: applied, pending: migrations.map(\.name).filter { checksums[$0] == nil })
    }

    private func appliedChecksums(_ connection: PostgresConnection) throws -> [String: String] {
        let rows = try connection.query("SELECT name, checksum FROM ledger.schema_migrations")
        var out: [String: String] = [:]
        for i in 0..<rows.count { out[try rows.string(i, "name")] = try rows.string(i, "checksum") }
        return out
    }

    private func checkUnchanged(_ applied: [String: String]) throws {
        let known = Dictionary(uniqueKeysWithValues: migrations.map { ($0.name, $0.checksum) })
        for (name, checksum) in applied.sorted(by: { $0.key < $1.key }) {
            guard let now = known[name] else { throw MigrationError.unknownApplied(name) }
            if now != checksum { throw MigrationError.changedAfterApply(name: name, applied: checksum, now: now) }
        }
    }
}
