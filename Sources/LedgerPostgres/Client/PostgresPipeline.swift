import CPostgres

/// One statement of a pipeline.
struct PipelinedStatement {
    var sql: String
    var parameters: [SQLValue]
    var prepared: Bool
}

/// Several statements in one round trip (libpq's pipeline mode), where the
/// caller does not need one's answer to send the next: BEGIN with a
/// transaction's first statement, and the last writes with COMMIT. On this
/// kind of machine a round trip costs 130 µs idle and about 400 µs under
/// load, more than most of the statements themselves.
extension PostgresConnection {
    /// Queues a statement to run just before COMMIT, in the same round trip, when its
    /// answer is not needed (a read-model save at the end of an append). Its error, if
    /// any, fails the commit. Outside a transaction it runs at once.
    public func deferUntilCommit(_ sql: String, _ parameters: [SQLValue], prepared: Bool = false) throws {
        guard inTransaction else {
            try query(sql, parameters, prepared: prepared)
            return
        }
        deferred.append(PipelinedStatement(sql: sql, parameters: parameters, prepared: prepared))
    }

    /// Sends the transaction's BEGIN now, for work that cannot share its round trip (COPY).
    func sendPendingBegin() throws {
        guard beginPending else { return }
        beginPending = false
        try query("BEGIN")
    }

    /// Ends `transaction`'s body: COMMIT, with the deferred statements before it (and
    /// BEGIN, if nothing was sent yet) in one round trip. A transaction that sent nothing
    /// and deferred nothing sends nothing.
    func commitPipelined() throws {
        let begin = beginPending
        beginPending = false
        let statements = deferred
        deferred = []
        if begin && statements.isEmpty { return }
        guard answerDeadline() == nil else {
            // A connection that bounds its waits runs them one by one, each under the bound.
            if begin { try query("BEGIN") }
            for statement in statements { try query(statement.sql, statement.parameters, prepared: statement.prepared) }
            try query("COMMIT")
            return
        }
        guard let conn else { throw PostgresError.connectionLost("no connection") }
        var pipelined = begin ? [PipelinedStatement(sql: "BEGIN", parameters: [], prepared: false)] : []
        pipelined += statements
        pipelined.append(PipelinedStatement(sql: "COMMIT", parameters: [], prepared: false))
        let results = try pipeline(conn, pipelined)
        results.forEach { PQclear($0) }
    }

    /// Runs `statements` in order in one round trip and returns each one's result (the
    /// caller clears them), or throws the first error: the server skips the statements
    /// after a failed one. Only on connections that do not bound their waits: it waits
    /// for the answers as long as libpq does.
    func pipeline(_ conn: OpaquePointer, _ statements: [PipelinedStatement]) throws -> [OpaquePointer] {
        // Statements are prepared (once per session) before the pipeline starts.
        var names: [String?] = []
        for statement in statements {
            names.append(statement.prepared ? try preparedName(conn, statement.sql, statement.parameters) : nil)
        }
        guard PQenterPipelineMode(conn) == 1 else { throw lostOrFailed(conn) }
        for (statement, name) in zip(statements, names) {
            let types = statement.parameters.map(Self.type)
            let sent: Int32 = Self.withParameterLayout(statement.parameters) { count, values, lengths, formats in
                if let name { return PQsendQueryPrepared(conn, name, count, values, lengths, formats, 0) }
                return PQsendQueryParams(conn, statement.sql, count, types, values, lengths, formats, 0)
            }
            if sent != 1 { throw abandon(conn) }
        }
        guard PQpipelineSync(conn) == 1 else { throw abandon(conn) }

        var results: [OpaquePointer] = []
        var failure: PostgresError?
        for _ in statements {
            guard let result = PQgetResult(conn) else {
                results.forEach { PQclear($0) }
                throw abandon(conn)
            }
            switch PQresultStatus(result) {
            case PGRES_COMMAND_OK, PGRES_TUPLES_OK, PGRES_EMPTY_QUERY:
                results.append(result)
            case PGRES_PIPELINE_ABORTED:
                PQclear(result)
            default:
                if failure == nil { failure = Self.error(from: result, conn: conn) }
                PQclear(result)
            }
            while let rest = PQgetResult(conn) { PQclear(rest) }   // a statement's results end with NULL
        }
        let sync = PQgetResult(conn)
        let synced = sync.map { PQresultStatus($0) == PGRES_PIPELINE_SYNC } ?? false
        if let sync { PQclear(sync) }
        guard synced, PQexitPipelineMode(conn) == 1 else {
            results.forEach { PQclear($0) }
            throw abandon(conn)
        }
        if let failure {
            results.forEach { PQclear($0) }
            if case .server(let state, _, _, _) = failure, state == "26000" {
                // The session lost its prepared statements (DISCARD ALL, a pooler in between):
                // they are prepared again on next use, and the caller may retry at once.
                forgetPreparedStatements()
                throw PostgresError.connectionLost("the session lost its prepared statements; retry")
            }
            throw failure
        }
        return results
    }

    /// A pipeline that broke half way leaves the session in an unknown state: drop it
    /// (the pool reconnects) and report why.
    private func abandon(_ conn: OpaquePointer) -> PostgresError {
        let error = lostOrFailed(conn)
        close()
        return .connectionLost("a pipelined exchange with PostgreSQL broke off: \(error)")
    }
}
