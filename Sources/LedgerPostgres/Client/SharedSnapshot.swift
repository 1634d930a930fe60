/// One snapshot read by several connections at once (`pg_export_snapshot`): a
/// REPEATABLE READ transaction exports it, and others begin in it, so that every one of
/// them sees exactly the same committed rows.
package struct SharedSnapshot: Sendable {
    /// PostgreSQL's name for it, as `pg_export_snapshot()` gave it.
    package let id: String

    /// Exports the snapshot of `connection`'s transaction (REPEATABLE READ, already begun);
    /// it can be joined while that transaction lasts.
    package static func export(from connection: PostgresConnection) throws -> SharedSnapshot {
        let id = try connection.query("SELECT pg_export_snapshot() AS id").string(0, "id")
        // SET TRANSACTION SNAPSHOT takes no parameter: the name goes into its text, so it
        // must be the hex digits and dashes PostgreSQL makes, and nothing else.
        guard !id.isEmpty, id.allSatisfy({ $0.isHexDigit || $0 == "-" }) else {
            throw PostgresError.unexpectedResult("pg_export_snapshot() returned \(id.debugDescription)")
        }
        return SharedSnapshot(id: id)
    }

    /// Runs `body` in a read-only transaction of `connection` that reads this snapshot.
    package func join<T>(on connection: PostgresConnection, _ body: (PostgresConnection) throws -> T) throws -> T {
        try connection.transaction { c in
            try c.query("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
            try c.query("SET TRANSACTION SNAPSHOT '\(id)'")
            return try body(c)
        }
    }
}
