import CPostgres

/// Rows in binary, one statement's worth at a time: a cursor's FETCH.
extension PostgresConnection {
    /// Runs `sql` (no parameters: a `FETCH` from a cursor of this transaction) with its
    /// rows in binary, the form COPY's binary format gives them, and hands each to `row`
    /// as a `BinaryCopyRow`, valid only during the call. Returns how many rows there were.
    /// PostgreSQL works on the statement only until its rows are made: a reader that
    /// fetches a few hundred at a time keeps it to short stretches, where a COPY fills
    /// the socket's buffers (megabytes) whenever the reader has taken some.
    package func fetchBinary(_ sql: String, row: (BinaryCopyRow) throws -> Void) throws -> Int {
        try sendPendingBegin()
        guard let conn else { throw PostgresError.connectionLost("no connection") }
        guard let result = PQexecParams(conn, sql, 0, nil, nil, nil, nil, 1) else { throw lostOrFailed(conn) }
        defer { PQclear(result) }
        guard PQresultStatus(result) == PGRES_TUPLES_OK else { throw Self.error(from: result, conn: conn) }
        let rows = Int(PQntuples(result)), columns = Int(PQnfields(result))
        // Each row's fields copied side by side, as a COPY row lies.
        var bytes: [UInt8] = []
        var fields = [Int](repeating: 0, count: 2 * columns)
        for r in 0..<rows {
            bytes.removeAll(keepingCapacity: true)
            for c in 0..<columns {
                fields[2 * c] = bytes.count
                if PQgetisnull(result, Int32(r), Int32(c)) == 1 {
                    fields[2 * c + 1] = -1
                    continue
                }
                let length = Int(PQgetlength(result, Int32(r), Int32(c)))
                fields[2 * c + 1] = length
                if length > 0, let value = PQgetvalue(result, Int32(r), Int32(c)) {
                    bytes.append(contentsOf: UnsafeRawBufferPointer(start: value, count: length))
                }
            }
            try bytes.withUnsafeBytes { b in
                try fields.withUnsafeBufferPointer { f in try row(BinaryCopyRow(bytes: b, fields: f)) }
            }
        }
        return rows
    }
}
