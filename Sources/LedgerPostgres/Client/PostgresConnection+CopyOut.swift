import CPostgres

/// COPY TO STDOUT: the fastest way PostgreSQL hands out many rows, streamed.
extension PostgresConnection {
    /// Runs `COPY (...) TO STDOUT` and hands its output to `chunk` piece by piece as it
    /// arrives (libpq gives one row a piece; the binary format's header and trailer may
    /// come as pieces of their own). A piece is valid only during the call. Memory stays
    /// flat however many rows. Returns the number of rows PostgreSQL says it sent.
    ///
    /// COPY takes no bind parameters: values reach it through settings made with a
    /// parameterized `set_config` first (`current_setting` in the COPY's text), never
    /// inside its SQL. If `chunk` throws, the COPY is cancelled, its remaining output
    /// drained, and the error rethrown; the connection stays usable.
    @discardableResult
    public func copyOut(_ sql: String, chunk: (UnsafeRawBufferPointer) throws -> Void) throws -> Int {
        if !inTransaction { try reconnectIfNeeded() }
        guard let conn else { throw PostgresError.connectionLost("no connection") }
        if answerDeadline() != nil { try sendPendingBegin() }
        var text = sql
        if beginPending {
            beginPending = false
            text = "BEGIN;\n" + sql   // one simple query: the transaction's BEGIN, then the COPY
        }
        guard PQsendQuery(conn, text) == 1 else { throw lostOrFailed(conn) }
        guard var first = PQgetResult(conn) else { throw lostOrFailed(conn) }
        while PQresultStatus(first) == PGRES_COMMAND_OK {
            PQclear(first)
            guard let next = PQgetResult(conn) else { throw lostOrFailed(conn) }
            first = next
        }
        guard PQresultStatus(first) == PGRES_COPY_OUT else {
            let error = Self.error(from: first, conn: conn)
            PQclear(first)
            while let rest = PQgetResult(conn) { PQclear(rest) }
            throw error
        }
        PQclear(first)
        var failure: Error?
        while true {
            var buffer: UnsafeMutablePointer<CChar>?
            let length = PQgetCopyData(conn, &buffer, 0)
            if length == -1 { break }                      // done: the final result follows
            if length < 0 { failure = failure ?? lostOrFailed(conn); break }
            guard let buffer else { continue }
            defer { PQfreemem(buffer) }
            if failure != nil { continue }                 // draining after a cancel
            do {
                try chunk(UnsafeRawBufferPointer(start: buffer, count: Int(length)))
            } catch {
                failure = error
                cancelRunningStatement(conn)
            }
        }
        var rows = 0
        while let result = PQgetResult(conn) {
            defer { PQclear(result) }
            if PQresultStatus(result) == PGRES_COMMAND_OK {
                rows = Int(String(cString: PQcmdTuples(result))) ?? 0
            } else if failure == nil {
                failure = Self.error(from: result, conn: conn)
            }
        }
        if let failure { throw failure }
        return rows
    }

    /// Asks the server to stop the statement this connection runs (its output is then
    /// drained by the caller, and ends with a 57014 error that the caller's own error replaces).
    private func cancelRunningStatement(_ conn: OpaquePointer) {
        guard let cancel = PQgetCancel(conn) else { return }
        defer { PQfreeCancel(cancel) }
        var message = [CChar](repeating: 0, count: 256)
        _ = PQcancel(cancel, &message, Int32(message.count))
    }
}
