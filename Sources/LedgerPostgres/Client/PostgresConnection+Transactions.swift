import CPostgres

/// Scripts and transactions: a body run in BEGIN ... COMMIT (rolled back when it
/// throws), and transactions that span several calls (an export's cursor).
extension PostgresConnection {
    /// Runs a script of several statements with no parameters (migrations only:
    /// the simple query protocol; never pass values this way).
    public func executeScript(_ sql: String) throws {
        try sendPendingBegin()
        if !inTransaction { try reconnectIfNeeded() }
        guard let conn else { throw PostgresError.connectionLost("no connection") }
        guard let result = PQexec(conn, sql) else { throw lostOrFailed(conn) }
        defer { PQclear(result) }
        let status = PQresultStatus(result)
        if status != PGRES_COMMAND_OK && status != PGRES_TUPLES_OK && status != PGRES_EMPTY_QUERY {
            throw Self.error(from: result, conn: conn)
        }
    }

    /// Runs `body` inside BEGIN/COMMIT; rolls back when it throws.
    ///
    /// Round trips are saved where the answers are not needed: BEGIN goes out in
    /// one pipeline with the transaction's first statement, and statements given
    /// to `deferUntilCommit` go out in one pipeline with COMMIT.
    public func transaction<T>(_ body: (PostgresConnection) throws -> T) throws -> T {
        try reconnectIfNeeded()
        inTransaction = true
        beginPending = true
        deferred = []
        do {
            let value = try body(self)
            try commitPipelined()
            inTransaction = false
            return value
        } catch {
            inTransaction = false
            let begun = !beginPending
            beginPending = false
            deferred = []
            if begun && isHealthy { _ = try? query("ROLLBACK") }
            throw error
        }
    }

    /// Opens a transaction that spans several calls (an export's snapshot, read a batch at
    /// a time as its reader asks): `sql` is its BEGIN. Until `endSpanningTransaction`, the
    /// connection never reconnects silently, so no statement can run outside it.
    public func beginSpanningTransaction(_ sql: String = "BEGIN") throws {
        precondition(!inTransaction, "a transaction is already open on this connection")
        try reconnectIfNeeded()
        try query(sql)
        inTransaction = true
    }

    /// Commits a transaction `beginSpanningTransaction` opened.
    public func endSpanningTransaction() throws {
        defer { inTransaction = false }
        try query("COMMIT")
    }
}
