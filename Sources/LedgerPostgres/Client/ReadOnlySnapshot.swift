extension PostgresConnection {
    /// Runs `body` in one read-only REPEATABLE READ transaction: everything it reads is
    /// one snapshot, so writes committed meanwhile do not read as differences.
    package func readOnlySnapshot<T>(_ body: (PostgresConnection) throws -> T) throws -> T {
        try transaction { c in
            try c.query("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
            return try body(c)
        }
    }
}
