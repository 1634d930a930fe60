import Dispatch
import Foundation

/// Database settings as a value, built once from the environment.
public struct DatabaseConfiguration: Sendable {
    public var connectionString: String
    public var poolSize: Int
    /// How long a borrower waits for a free connection before giving up (→ 503).
    public var acquireTimeoutSeconds: Double
    public var connectTimeoutSeconds: Int
    /// The server cancels any one statement that runs longer (nil: no limit).
    public var statementTimeoutSeconds: Double?
    /// How long one borrow may take in all, waiting for a connection, connecting and every
    /// answer included (nil: no limit): past it the borrower gets an unavailable error and
    /// the connection is dropped. For borrowers that must answer within a request's time.
    public var borrowTimeoutSeconds: Double?

    public init(connectionString: String, poolSize: Int = 8, acquireTimeoutSeconds: Double = 5, connectTimeoutSeconds: Int = 3,
                statementTimeoutSeconds: Double? = nil, borrowTimeoutSeconds: Double? = nil) {
        self.borrowTimeoutSeconds = borrowTimeoutSeconds
        self.connectionString = connectionString
        self.poolSize = poolSize
        self.acquireTimeoutSeconds = acquireTimeoutSeconds
        self.connectTimeoutSeconds = connectTimeoutSeconds
        self.statementTimeoutSeconds = statementTimeoutSeconds
    }
}

/// A small fixed-size pool. Connections are opened lazily and reopened after
/// the server restarts; a borrower holds one connection exclusively.
/// Blocking work runs on the caller's thread (sync API) or on a dedicated
/// dispatch queue (async API), never on Swift's cooperative pool.
public final class ConnectionPool: @unchecked Sendable {
    // @unchecked: all mutable state is guarded by `condition`.
    public let configuration: DatabaseConfiguration
    private let condition = NSCondition()
    private var idle: [PostgresConnection] = []
    private var opened = 0
    private var waiting = 0
    private var closed = false
    private static let blockingQueue = DispatchQueue(label: "ledger.postgres.blocking", attributes: .concurrent)

    public init(configuration: DatabaseConfiguration) {
        self.configuration = configuration
    }

    /// Connections currently lent out, and the pool's size (for metrics).
    public var usage: (inUse: Int, open: Int, size: Int, waiting: Int) {
        condition.lock(); defer { condition.unlock() }
        return (opened - idle.count, opened, configuration.poolSize, waiting)
    }

    /// Borrows a connection for the duration of `body`, bounded by `within` seconds (by
    /// default the configuration's `borrowTimeoutSeconds`) when one is given.
    public func withConnection<T>(within seconds: Double? = nil, _ body: (PostgresConnection) throws -> T) throws -> T {
        let budget = seconds ?? configuration.borrowTimeoutSeconds
        let deadline = budget.map { ContinuousClock.now + .milliseconds(Int(max(0, $0) * 1000)) }
        let connection = try acquire(waitingAtMost: min(configuration.acquireTimeoutSeconds, budget ?? .infinity),
                                     deadline: deadline)
        if let deadline, deadline - ContinuousClock.now < Self.leastUsefulRemainder {
            // The wait for a connection took the budget: give the connection back as it is
            // rather than send a statement that must be abandoned (dropping the connection).
            release(connection, healthy: true)
            throw PostgresError.poolExhausted(waitedSeconds: budget ?? configuration.acquireTimeoutSeconds)
        }
        var healthy = true
        connection.borrowDeadline = deadline
        defer {
            connection.borrowDeadline = nil
            release(connection, healthy: healthy)
        }
        do {
            try connection.reconnectIfNeeded()
            return try body(connection)
        } catch let error as PostgresError where error.isUnavailable {
            healthy = connection.isHealthy
            throw error
        }
    }

    /// Borrows a connection inside a transaction.
    public func transaction<T>(_ body: (PostgresConnection) throws -> T) throws -> T {
        try withConnection { try $0.transaction(body) }
    }

    /// The async form: the blocking work hops to a dedicated queue.
    public func run<T: Sendable>(_ body: @escaping @Sendable (PostgresConnection) throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            Self.blockingQueue.async {
                continuation.resume(with: Result { try self.withConnection(body) })
            }
        }
    }

    public func close() {
        condition.lock()
        closed = true
        let toClose = idle
        idle.removeAll()
        opened -= toClose.count
        condition.broadcast()
        condition.unlock()
        toClose.forEach { $0.close() }
    }

    /// Less than this left of a borrow's budget once it holds a connection: not worth a statement.
    static let leastUsefulRemainder: Duration = .milliseconds(50)

    private func acquire(waitingAtMost seconds: Double, deadline: ContinuousClock.Instant?) throws -> PostgresConnection {
        let waitUntil = Date().addingTimeInterval(seconds)
        condition.lock()
        while true {
            if closed {
                condition.unlock()
                throw PostgresError.connectionFailed("the connection pool is shut down")
            }
            if let connection = idle.popLast() {
                condition.unlock()
                return connection
            }
            if opened < configuration.poolSize {
                opened += 1
                condition.unlock()
                do {
                    return try PostgresConnection(connectionString: configuration.connectionString,
                                                  connectTimeoutSeconds: configuration.connectTimeoutSeconds,
                                                  statementTimeoutSeconds: configuration.statementTimeoutSeconds,
                                                  deadline: deadline)
                } catch {
                    condition.lock()
                    opened -= 1
                    condition.signal()
                    condition.unlock()
                    throw error
                }
            }
            waiting += 1
            let signalled = condition.wait(until: waitUntil)
            waiting -= 1
            if !signalled && idle.isEmpty && opened >= configuration.poolSize {
                condition.unlock()
                throw PostgresError.poolExhausted(waitedSeconds: seconds)
            }
        }
    }

    private func release(_ connection: PostgresConnection, healthy: Bool) {
        condition.lock()
        if closed || !healthy {
            opened -= 1
            condition.signal()
            condition.unlock()
            connection.close()
            return
        }
        idle.append(connection)
        condition.signal()
        condition.unlock()
    }
}
