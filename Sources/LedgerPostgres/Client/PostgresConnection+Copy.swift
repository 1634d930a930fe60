import CPostgres
import Foundation

/// COPY FROM STDIN: rows sent in binary or text, in one round trip.
extension PostgresConnection {
    /// Runs `COPY ... FROM STDIN`; `produce` sends the input piece by piece, so
    /// PostgreSQL works on the first rows while the caller builds the next. If
    /// `produce` throws, the COPY is abandoned (nothing is stored) and the error
    /// rethrown. `afterSending` runs once all the input is sent, while PostgreSQL
    /// still works on it: work that needs no database (its error abandons the
    /// result as well). Returns the number of rows copied.
    ///
    /// The COPY command goes out at once and the input is built while its answer
    /// travels back: pieces made before the server is ready wait, and go out as
    /// soon as it is (one round trip less on the writer's path).
    ///
    /// `precededBy`: a statement without parameters to run first, in the same round
    /// trip (the transaction's BEGIN, if it is still to be sent, goes the same way).
    /// `checkLeadingRow` gets its first row's values as text before any input goes
    /// out; if it throws, the COPY is abandoned and its error rethrown.
    @discardableResult
    public func copyIn(_ sql: String, precededBy leading: String? = nil,
                       checkLeadingRow: (([String?]) throws -> Void)? = nil,
                       produce: (_ send: ([UInt8]) throws -> Void) throws -> Void,
                       afterSending: () throws -> Void = {}) throws -> Int {
        if answerDeadline() != nil { try sendPendingBegin() }
        if !inTransaction { try reconnectIfNeeded() }
        guard let conn else { throw PostgresError.connectionLost("no connection") }
        // One simple query: its statements run in order, the COPY last.
        var text = leading.map { $0 + ";\n" } ?? ""
        if beginPending {
            beginPending = false
            text = "BEGIN;\n" + text
        }
        guard PQsendQuery(conn, text + sql) == 1 else { throw lostOrFailed(conn) }
        func put(_ piece: [UInt8]) throws {
            let sent = piece.withUnsafeBufferPointer { buffer -> Int32 in
                buffer.baseAddress.map { base in
                    base.withMemoryRebound(to: CChar.self, capacity: buffer.count) {
                        PQputCopyData(conn, $0, Int32(buffer.count))
                    }
                } ?? 1
            }
            if sent != 1 { throw lostOrFailed(conn) }
        }
        var started = false, refused = false
        var early: [[UInt8]] = []
        // Waits for the server's answer to the COPY command, then sends what waited.
        func start() throws {
            guard var result = PQgetResult(conn) else { throw lostOrFailed(conn) }
            // The statements before the COPY answer first.
            var vetoed: Error?
            while [PGRES_COMMAND_OK, PGRES_TUPLES_OK].contains(PQresultStatus(result)) {
                if PQresultStatus(result) == PGRES_TUPLES_OK, let checkLeadingRow, vetoed == nil {
                    let row: [String?] = PQntuples(result) == 0 ? [] : (0..<PQnfields(result)).map { column in
                        PQgetisnull(result, 0, column) == 1 ? nil : String(cString: PQgetvalue(result, 0, column))
                    }
                    do { try checkLeadingRow(row) } catch { vetoed = error }
                }
                PQclear(result)
                guard let next = PQgetResult(conn) else { throw lostOrFailed(conn) }
                result = next
            }
            guard PQresultStatus(result) == PGRES_COPY_IN else {
                refused = true
                let error = Self.error(from: result, conn: conn)
                PQclear(result)
                while let rest = PQgetResult(conn) { PQclear(rest) }
                throw error
            }
            PQclear(result)
            started = true
            if let vetoed { throw vetoed }   // begun, so that it is abandoned below
            for piece in early { try put(piece) }
            early = []
        }
        // True once the answer is in, without waiting for it.
        func answered() -> Bool { PQconsumeInput(conn) == 1 && PQisBusy(conn) == 0 }
        var failure: Error?
        do {
            try produce { piece in
                if !started && answered() { try start() }
                if started { try put(piece) } else { early.append(piece) }
            }
        } catch {
            failure = error
        }
        if !started && !refused {
            // Even when `produce` failed: the COPY must be begun to be abandoned.
            do { try start() } catch { if failure == nil { failure = error } }
        }
        // The server refused the command, or the connection broke: no COPY to end.
        if !started { throw failure ?? lostOrFailed(conn) }
        let ended = PQputCopyEnd(conn, failure == nil ? nil : "the client abandoned the COPY")
        if ended != 1 && failure == nil { failure = lostOrFailed(conn) }
        if failure == nil {
            do { try afterSending() } catch { failure = error }
        }
        var copied = 0
        while let result = PQgetResult(conn) {
            defer { PQclear(result) }
            if PQresultStatus(result) == PGRES_COMMAND_OK {
                copied = Int(String(cString: PQcmdTuples(result))) ?? 0
            } else if failure == nil {
                failure = Self.error(from: result, conn: conn)
            }
        }
        if let failure { throw failure }
        return copied
    }
}
