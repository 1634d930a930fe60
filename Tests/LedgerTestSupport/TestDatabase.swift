import Foundation
import LedgerPostgres

/// A fresh, migrated database per test suite, made from DATABASE_URL (which
/// Ops/test provides). Without DATABASE_URL this fails loudly: database tests
/// never skip quietly.
public struct TestDatabase: Sendable {
    public let name: String
    public let url: String
    public let adminURL: String

    public enum Failure: Error, CustomStringConvertible {
        case noDatabase
        public var description: String {
            "DATABASE_URL is not set: database tests need a real PostgreSQL (run them through Ops/test)"
        }
    }

    /// Creates `ledger_test_<random>` and applies every migration.
    public static func create(_ label: String = "t") throws -> TestDatabase {
        guard let admin = ProcessInfo.processInfo.environment["DATABASE_URL"], !admin.isEmpty else {
            throw Failure.noDatabase
        }
        let name = "ledger_test_\(label)_\(UInt32.random(in: 0...UInt32.max))"
        let connection = try PostgresConnection(connectionString: admin)
        try connection.query("CREATE DATABASE \(name)")   // name is ours: [a-z0-9_] only
        connection.close()
        let url = Self.url(admin, database: name)
        let migrator = Migrator(migrations: try Migration.load(from: migrationsDirectory))
        let target = try PostgresConnection(connectionString: url)
        try migrator.migrate(target)
        target.close()
        return TestDatabase(name: name, url: url, adminURL: admin)
    }

    public func connect() throws -> PostgresConnection { try PostgresConnection(connectionString: url) }

    public func pool(size: Int = 8) -> ConnectionPool {
        ConnectionPool(configuration: DatabaseConfiguration(connectionString: url, poolSize: size))
    }

    /// This database as the service's own least-privileged role (as Ops/run serves).
    public var serviceURL: String {
        if url.hasPrefix("postgres://") || url.hasPrefix("postgresql://") {
            guard var components = URLComponents(string: url) else { return url }
            components.user = "ledger_service"
            components.password = nil
            return components.string ?? url
        }
        return url + " user=ledger_service"
    }

    /// The same server, another database: URI path replaced, or a later `dbname=` appended.
    public static func url(_ base: String, database: String) -> String {
        if base.hasPrefix("postgres://") || base.hasPrefix("postgresql://") {
            guard var components = URLComponents(string: base) else { return base }
            components.path = "/" + database
            return components.string ?? base
        }
        return base + " dbname=" + database
    }

    public static let migrationsDirectory: String = {
        var url = URL(fileURLWithPath: #filePath)
        while url.path != "/" {
            url.deleteLastPathComponent()
            let candidate = url.appendingPathComponent("Migrations").path
            if FileManager.default.fileExists(atPath: candidate) { return candidate }
        }
        return "Migrations"
    }()
}
