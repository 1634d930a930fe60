import CPostgres
import Foundation

/// One libpq connection. Not thread-safe by design: a connection is used by
/// one thread at a time, which the pool guarantees by lending it out whole.
/// It reconnects by itself when the server went away between uses.
public final class PostgresConnection: @unchecked Sendable {
    // @unchecked: the PGconn pointer is only touched by the thread that holds
    // this connection (the pool hands it to one borrower at a time).
    var conn: OpaquePointer?
    public let connectionString: String
    public internal(set) var inTransaction = false

    private let connectTimeoutSeconds: Int
    private let statementTimeoutSeconds: Double?
    /// With a statement timeout, the client also stops waiting a little after it (see `awaitResult`).
    private var answerTimeoutSeconds: Double? {
        statementTimeoutSeconds.flatMap { $0.isFinite && $0 > 0 ? $0 + 2 : nil }
    }
    private var answerTimedOut = false
    /// Set by the pool for one borrow (`ConnectionPool.withConnection(within:)`): no answer
    /// is awaited past it, and a reconnect that could not finish by then is not begun.
    public var borrowDeadline: ContinuousClock.Instant?
    /// Inside `transaction`: BEGIN not sent yet (it goes out with the first statement).
    var beginPending = false
    /// Inside `transaction`: statements to send with COMMIT (`deferUntilCommit`).
    var deferred: [PipelinedStatement] = []

    /// Connects now; throws `.invalidConnectionString` or `.connectionFailed`.
    /// `statementTimeoutSeconds` makes the server cancel any statement that runs longer.
    /// `deadline`: connecting and the session's setup give up by then (a borrower's deadline).
    public init(connectionString: String, connectTimeoutSeconds: Int = 5, statementTimeoutSeconds: Double? = nil,
                deadline: ContinuousClock.Instant? = nil) throws {
        self.connectionString = connectionString
        self.connectTimeoutSeconds = connectTimeoutSeconds
        self.statementTimeoutSeconds = statementTimeoutSeconds
        self.conn = try Self.open(connectionString, timeout: try Self.connectTimeout(connectTimeoutSeconds, by: deadline),
                                  statementTimeout: statementTimeoutSeconds, deadline: deadline)
    }

    /// The connect timeout to give libpq: the configured one, or with a deadline what is
    /// left before it rounded up (libpq counts whole seconds); the deadline itself is kept
    /// exactly by `open`, which then connects without blocking. Throws when it has passed.
    static func connectTimeout(_ configured: Int, by deadline: ContinuousClock.Instant?) throws -> Int {
        guard let deadline else { return configured }
        let left = deadline - ContinuousClock.now
        guard left > .zero else {
            throw PostgresError.connectionFailed("no time left to connect before the request's deadline")
        }
        return min(configured, max(2, Int(left.components.seconds) + 1))
    }

    /// Milliseconds left before `deadline` (0 once it has passed).
    static func millisecondsLeft(_ deadline: ContinuousClock.Instant) -> Int {
        let left = deadline - ContinuousClock.now
        return max(0, Int(left.components.seconds * 1000 + left.components.attoseconds / 1_000_000_000_000_000))
    }

    /// Connects without blocking past `deadline` (PQconnectStartParams and PQconnectPoll):
    /// nil when it passed first, the connection otherwise (whatever its status).
    private static func connect(keys: [String], values: [String], by deadline: ContinuousClock.Instant) -> OpaquePointer?? {
        let started: OpaquePointer? = withCStrings(keys) { k in
            withCStrings(values) { v in PQconnectStartParams(k, v, 1) }
        }
        guard let pointer = started else { return .some(nil) }
        if PQstatus(pointer) == CONNECTION_BAD { return pointer }
        var status = PGRES_POLLING_WRITING
        while status != PGRES_POLLING_OK && status != PGRES_POLLING_FAILED {
            let milliseconds = millisecondsLeft(deadline)
            guard milliseconds > 0 else {
                PQfinish(pointer)
                return nil
            }
            var descriptor = pollfd(fd: PQsocket(pointer),
                                    events: Int16(status == PGRES_POLLING_READING ? POLLIN : POLLOUT), revents: 0)
            let ready = poll(&descriptor, 1, Int32(min(milliseconds, 60_000)))
            if ready < 0 && errno != EINTR { break }
            if ready == 0 { continue }
            status = PQconnectPoll(pointer)
        }
        return pointer
    }

    deinit { if let conn { PQfinish(conn) } }

    private static func open(_ conninfo: String, timeout: Int, statementTimeout: Double?,
                             deadline: ContinuousClock.Instant?) throws -> OpaquePointer {
        // Validate the string first so a typo is reported as such, not as a network error.
        try validate(connectionString: conninfo)
        var keys = ["dbname", "connect_timeout", "application_name", "keepalives_idle", "keepalives_interval", "keepalives_count"]
        var values = [conninfo, String(timeout), "ledger", "10", "5", "3"]
        // A server that vanishes mid-statement (no ACKs) is given up after the statement
        // timeout plus a margin, or 30 s without one, not after the kernel's ~15 minutes of
        // retransmissions (keepalives cover idle connections only).
        keys.append("tcp_user_timeout")
        if let statementTimeout, statementTimeout.isFinite, statementTimeout > 0 {
            values.append(String(Int((statementTimeout + 5) * 1000)))
        } else {
            values.append(String(Self.unansweredDataTimeoutMilliseconds))
        }
        let pointer: OpaquePointer?
        if let deadline {
            guard let connected = connect(keys: keys, values: values, by: deadline) else {
                throw PostgresError.connectionFailed("PostgreSQL did not accept the connection by the request's deadline")
            }
            pointer = connected
        } else {
            pointer = withCStrings(keys) { k in
                withCStrings(values) { v in PQconnectdbParams(k, v, 1) }
            }
        }
        guard let pointer else { throw PostgresError.connectionFailed("libpq could not allocate a connection") }
        guard PQstatus(pointer) == CONNECTION_OK else {
            let message = String(cString: PQerrorMessage(pointer)).trimmedLine
            PQfinish(pointer)
            throw PostgresError.connectionFailed(message)
        }
        // Server NOTICEs ("already exists, skipping") are not errors; keep them off stderr.
        PQsetNoticeProcessor(pointer, { _, _ in }, nil)
        // JIT compilation costs tens of milliseconds and pays off only for long
        // analytic queries; the ledger's statements are short.
        var settings = "SET bytea_output = 'hex'; SET TIME ZONE 'UTC'; SET DateStyle = 'ISO'; SET jit = off"
        if let statementTimeout, statementTimeout.isFinite, statementTimeout > 0 {
            settings += "; SET statement_timeout = " + String(max(1, Int((statementTimeout * 1000).rounded())))
        }
        do {
            try setUp(pointer, settings, by: deadline)
        } catch {
            PQfinish(pointer)
            throw error
        }
        return pointer
    }

    /// Runs the session's SET statements, giving up at `deadline` when there is one (a
    /// server that stops answering right after the handshake must not hold the borrower).
    private static func setUp(_ pointer: OpaquePointer, _ settings: String, by deadline: ContinuousClock.Instant?) throws {
        guard let deadline else {
            let result = PQexec(pointer, settings)
            defer { PQclear(result) }
            guard let result, PQresultStatus(result) == PGRES_COMMAND_OK else {
                throw PostgresError.connectionFailed("the session setup failed: " + String(cString: PQerrorMessage(pointer)).trimmedLine)
            }
            return
        }
        guard PQsendQuery(pointer, settings) == 1 else {
            throw PostgresError.connectionFailed("the session setup could not be sent: " + String(cString: PQerrorMessage(pointer)).trimmedLine)
        }
        while PQisBusy(pointer) == 1 {
            let milliseconds = millisecondsLeft(deadline)
            guard milliseconds > 0 else {
                throw PostgresError.connectionFailed("PostgreSQL did not answer the session setup by the request's deadline")
            }
            var descriptor = pollfd(fd: PQsocket(pointer), events: Int16(POLLIN), revents: 0)
            let ready = poll(&descriptor, 1, Int32(min(milliseconds, 60_000)))
            if ready < 0 && errno != EINTR { break }
            if ready > 0 && PQconsumeInput(pointer) == 0 { break }
        }
        var failure: String?
        while let result = PQgetResult(pointer) {
            if PQresultStatus(result) != PGRES_COMMAND_OK && failure == nil {
                failure = String(cString: PQresultErrorMessage(result)).trimmedLine
            }
            PQclear(result)
        }
        if let failure { throw PostgresError.connectionFailed("the session setup failed: " + failure) }
        if PQstatus(pointer) != CONNECTION_OK {
            throw PostgresError.connectionFailed("the connection broke during its setup: " + String(cString: PQerrorMessage(pointer)).trimmedLine)
        }
    }

    /// How long data sent on a connection without a statement timeout may go unacknowledged
    /// before the kernel drops it (`tcp_user_timeout`).
    static let unansweredDataTimeoutMilliseconds = 30_000

    /// Throws `.invalidConnectionString` when libpq cannot parse `conninfo`, without
    /// connecting. libpq's message quotes the part it could not read, which may be a
    /// password: whatever it quotes is left out of the error.
    public static func validate(connectionString conninfo: String) throws {
        if let problem = unencodedUserinfo(conninfo) { throw PostgresError.invalidConnectionString(problem) }
        var parseError: UnsafeMutablePointer<CChar>?
        if let options = PQconninfoParse(conninfo, &parseError) {
            defer { PQconninfoFree(options) }
            var i = 0
            while let keyword = options[i].keyword {
                if let value = options[i].val, let problem = Self.problem(option: String(cString: keyword), value: String(cString: value)) {
                    throw PostgresError.invalidConnectionString(problem)
                }
                i += 1
            }
            return
        }
        let message = parseError.map { String(cString: $0) } ?? "unparseable"
        if let parseError { PQfreemem(parseError) }
        throw PostgresError.invalidConnectionString(redactingQuotedParts(message.trimmedLine))
    }

    /// A URI whose user or password holds an unencoded `@` or `/` (common in generated
    /// passwords): libpq reads the rest of the password as the host, port or database and
    /// fails only when it connects, quoting that part in its error, which then reaches the
    /// logs. Such a URI is refused here, naming no part of it; nil when the URI is well formed
    /// (RFC 3986: the authority ends at the first `/`, `?` or `#`, and holds at most one `@`).
    static func unencodedUserinfo(_ conninfo: String) -> String? {
        guard let scheme = conninfo.range(of: "://"),
              ["postgresql", "postgres"].contains(conninfo[..<scheme.lowerBound].lowercased()) else { return nil }
        let rest = conninfo[scheme.upperBound...]
        let authorityEnd = rest.firstIndex { $0 == "/" || $0 == "?" || $0 == "#" } ?? rest.endIndex
        let authority = rest[..<authorityEnd]
        let pathEnd = rest[authorityEnd...].firstIndex { $0 == "?" || $0 == "#" } ?? rest.endIndex
        let ats = authority.filter { $0 == "@" }.count
        guard ats > 1 || (ats == 0 && rest[authorityEnd..<pathEnd].contains("@")) else { return nil }
        return "the user name or password in the URI holds an unencoded '@' or '/': percent-encode them (%40, %2F)"
    }

    /// The values libpq parses without checking, and only refuses once it connects: a bad
    /// one would let `ledger serve` start and answer 503 for ever, and libpq's error then
    /// quotes the value, which is a piece of the password when an unencoded `/` or `#` in it
    /// made libpq read the rest as the port. Nil when `value` is one libpq takes; the
    /// problem never quotes the value.
    static func problem(option: String, value: String) -> String? {
        let allowed: [String: Set<String>] = [
            "sslmode": ["disable", "allow", "prefer", "require", "verify-ca", "verify-full"],
            "gssencmode": ["disable", "prefer", "require"],
            "channel_binding": ["disable", "prefer", "require"],
            "target_session_attrs": ["any", "read-write", "read-only", "primary", "standby", "prefer-standby"],
        ]
        if option == "port" {
            let ports = value.split(separator: ",", omittingEmptySubsequences: false)
            let fine = ports.allSatisfy { p in p.isEmpty || (p.utf8.count <= 5 && p.utf8.allSatisfy { (48...57).contains($0) } && Int(p)! <= 65_535) }
            return fine ? nil : "the port is not a number from 1 to 65535 (a password holding an unencoded '/', '#' or '@' is read as the host and port: percent-encode them, %2F, %23, %40)"
        }
        guard let values = allowed[option], !values.contains(value) else { return nil }
        return "\(option) must be one of \(values.sorted().joined(separator: ", "))"
    }

    /// `invalid percent-encoded token: "pa%zzword"` → `invalid percent-encoded token: "…"`.
    /// libpq does not escape quotes inside what it quotes (a password may hold one), so
    /// everything from the first quote to the last goes, whatever lies between.
    static func redactingQuotedParts(_ message: String) -> String {
        guard let first = message.firstIndex(of: "\"") else { return message }
        guard let last = message.lastIndex(of: "\""), first < last else { return String(message[...first]) + "…" }
        return String(message[...first]) + "…" + String(message[last...])
    }

    /// True when the socket is still good as far as libpq knows.
    public var isHealthy: Bool { conn.map { PQstatus($0) == CONNECTION_OK } ?? false }

    /// Re-establishes a broken connection. Outside a transaction only: a
    /// transaction cannot survive a lost connection.
    public func reconnectIfNeeded() throws {
        if let conn, !inTransaction, PQstatus(conn) == CONNECTION_OK {
            // libpq notices that the server closed an idle connection (a restart) only when it
            // next reads from it: a socket that is readable now holds that close (or a FATAL
            // notice before it), and reading it marks the connection bad. One poll(2), no wait.
            // The FATAL notice and the close can take two reads: read while there is more.
            var descriptor = pollfd(fd: PQsocket(conn), events: Int16(POLLIN), revents: 0)
            var reads = 0
            while reads < 4, PQstatus(conn) == CONNECTION_OK, poll(&descriptor, 1, 0) > 0, PQconsumeInput(conn) == 1 {
                reads += 1
            }
        }
        if isHealthy { return }
        if let conn { PQfinish(conn) }
        conn = nil
        inTransaction = false
        statements.removeAll()
        conn = try Self.open(connectionString, timeout: try Self.connectTimeout(connectTimeoutSeconds, by: borrowDeadline),
                             statementTimeout: statementTimeoutSeconds, deadline: borrowDeadline)
    }

    /// Runs one parameterized statement. Values never enter the SQL text.
    @discardableResult
    public func query(_ sql: String, _ parameters: [SQLValue] = []) throws -> QueryResult {
        try query(sql, parameters, prepared: false)
    }

    /// Runs one parameterized statement; with `prepared`, the statement is parsed and planned
    /// once per connection (`PQprepare`, remembered by its SQL text) and then only executed
    /// (`PQexecPrepared`). For statements run again and again with fixed SQL text.
    @discardableResult
    public func query(_ sql: String, _ parameters: [SQLValue], prepared: Bool) throws -> QueryResult {
        try withResult(sql, parameters, prepared: prepared) { Self.read($0) }
    }

    /// The first row's values as the bytes PostgreSQL sent (text format; nil for SQL NULL),
    /// or nil when there is no row. No String is made per cell: for hot reads whose text is
    /// passed on as it is.
    public func firstRow(_ sql: String, _ parameters: [SQLValue] = [], prepared: Bool = false) throws -> [[UInt8]?]? {
        try withResult(sql, parameters, prepared: prepared) { result in
            guard PQntuples(result) > 0 else { return nil }
            return (0..<PQnfields(result)).map { column -> [UInt8]? in
                if PQgetisnull(result, 0, column) == 1 { return nil }
                let length = Int(PQgetlength(result, 0, column))
                guard length > 0, let value = PQgetvalue(result, 0, column) else { return [] }
                return Array(UnsafeRawBufferPointer(start: value, count: length))
            }
        }
    }

    /// Every row's values as the bytes PostgreSQL sent (text format; nil for SQL NULL), with
    /// no String made per cell: for hot reads whose text is passed on as it is.
    public func rawRows(_ sql: String, _ parameters: [SQLValue] = [], prepared: Bool = false) throws -> [[[UInt8]?]] {
        try withResult(sql, parameters, prepared: prepared) { result in
            let columns = PQnfields(result)
            return (0..<PQntuples(result)).map { row in
                (0..<columns).map { column -> [UInt8]? in
                    if PQgetisnull(result, row, column) == 1 { return nil }
                    let length = Int(PQgetlength(result, row, column))
                    guard length > 0, let value = PQgetvalue(result, row, column) else { return [] }
                    return Array(UnsafeRawBufferPointer(start: value, count: length))
                }
            }
        }
    }

    /// Statements prepared on this connection, by SQL text. A new connection (reconnect) starts
    /// empty: prepared statements live and die with their server session.
    private var statements: [String: PreparedStatement] = [:]
    private var statementCounter = 0
    /// Beyond this many, statements run unprepared: SQL built at run time cannot fill the server's memory.
    public static let maxPreparedStatements = 128

    private struct PreparedStatement {
        let name: String
        /// The parameter types it was prepared with (bytea for `.bytes`, else inferred).
        let types: [Oid]
    }

    /// Number of statements prepared on the current session (for tests).
    public var preparedStatementCount: Int { statements.count }

    private func withResult<T>(_ sql: String, _ parameters: [SQLValue], prepared: Bool,
                               _ body: (OpaquePointer) throws -> T) throws -> T {
        if !inTransaction { try reconnectIfNeeded() }
        guard let conn else { throw PostgresError.connectionLost("no connection") }
        if beginPending && answerDeadline() != nil { try sendPendingBegin() }
        if beginPending {
            beginPending = false
            let results = try pipeline(conn, [PipelinedStatement(sql: "BEGIN", parameters: [], prepared: false),
                                              PipelinedStatement(sql: sql, parameters: parameters, prepared: prepared)])
            defer { results.forEach { PQclear($0) } }
            return try body(results[1])
        }
        let result: OpaquePointer
        answerTimedOut = false
        do {
            if prepared {
                do {
                    result = try executePrepared(conn, sql, parameters)
                } catch PostgresError.server(let state, _, _, _) where state == "26000" && !inTransaction {
                    // The session lost the statement (DISCARD ALL, a pooler in between): prepare again.
                    statements.removeAll()
                    result = try executePrepared(conn, sql, parameters)
                }
            } else {
                result = try execute(conn, sql, parameters)
            }
        } catch where answerTimedOut {
            // The session is in an unknown state (a statement may still run): drop it.
            answerTimedOut = false
            close()
            inTransaction = false
            throw PostgresError.connectionLost(
                "PostgreSQL did not answer in time (\(answerTimeoutSeconds.map { "within \($0) s, or " } ?? "")by the request's deadline); the connection was dropped")
        }
        defer { PQclear(result) }
        return try body(result)
    }

    func executePrepared(_ conn: OpaquePointer, _ sql: String, _ parameters: [SQLValue]) throws -> OpaquePointer {
        guard let name = try preparedName(conn, sql, parameters) else { return try execute(conn, sql, parameters) }
        return try send(conn, parameters) { count, values, lengths, formats in
            guard let deadline = answerDeadline() else {
                return PQexecPrepared(conn, name, count, values, lengths, formats, 0)
            }
            guard PQsendQueryPrepared(conn, name, count, values, lengths, formats, 0) == 1 else { return nil }
            return awaitResult(conn, until: deadline)
        }
    }

    /// The server-side name of `sql` prepared for these parameters' types, preparing it
    /// now if needed; nil when it must run unprepared (bound with other types than it
    /// was prepared for, or too many statements prepared already).
    func preparedName(_ conn: OpaquePointer, _ sql: String, _ parameters: [SQLValue]) throws -> String? {
        let types = parameters.map(Self.type)
        if let known = statements[sql] { return known.types == types ? known.name : nil }
        guard statements.count < Self.maxPreparedStatements else { return nil }
        statementCounter += 1
        let name = "ledger_s\(statementCounter)"
        let prepared: OpaquePointer?
        if let deadline = answerDeadline() {
            guard PQsendPrepare(conn, name, sql, Int32(types.count), types) == 1 else { throw lostOrFailed(conn) }
            prepared = awaitResult(conn, until: deadline)
        } else {
            prepared = PQprepare(conn, name, sql, Int32(types.count), types)
        }
        guard let made = prepared else { throw lostOrFailed(conn) }
        defer { PQclear(made) }
        guard PQresultStatus(made) == PGRES_COMMAND_OK else { throw Self.error(from: made, conn: conn) }
        statements[sql] = PreparedStatement(name: name, types: types)
        return name
    }

    /// Forgets every prepared statement (the session lost them, or is gone).
    func forgetPreparedStatements() { statements.removeAll() }

    static func type(_ value: SQLValue) -> Oid {
        switch value {
        case .bytes: return 17   // bytea
        case .binary(_, let oid): return Oid(oid)
        default: return 0
        }
    }

    public func close() {
        if let conn { PQfinish(conn) }
        conn = nil
        statements.removeAll()
    }

    // MARK: - libpq plumbing

    func execute(_ conn: OpaquePointer, _ sql: String, _ parameters: [SQLValue]) throws -> OpaquePointer {
        let types = parameters.map(Self.type)
        return try send(conn, parameters) { count, values, lengths, formats in
            guard let deadline = answerDeadline() else {
                return PQexecParams(conn, sql, count, types, values, lengths, formats, 0)
            }
            guard PQsendQueryParams(conn, sql, count, types, values, lengths, formats, 0) == 1 else { return nil }
            return awaitResult(conn, until: deadline)
        }
    }

    /// When a statement must have been answered, if this connection bounds the wait: the
    /// statement timeout plus a margin, and never past the borrower's deadline.
    func answerDeadline() -> ContinuousClock.Instant? {
        let byStatement = answerTimeoutSeconds.map { ContinuousClock.now + .milliseconds(Int($0 * 1000)) }
        guard let borrowDeadline else { return byStatement }
        return byStatement.map { min($0, borrowDeadline) } ?? borrowDeadline
    }

    /// Waits for the whole answer to a statement sent with `PQsend*`, like `PQexec*` does,
    /// but gives up at `deadline`: the server-side statement timeout cannot fire in a server
    /// that is stopped or stuck. Returns nil (and marks `answerTimedOut`) when it gave up.
    private func awaitResult(_ conn: OpaquePointer, until deadline: ContinuousClock.Instant) -> OpaquePointer? {
        var kept: OpaquePointer?
        while true {
            while PQisBusy(conn) == 1 {
                let left = deadline - ContinuousClock.now
                let milliseconds = left.components.seconds * 1000 + left.components.attoseconds / 1_000_000_000_000_000
                if milliseconds <= 0 {
                    if let kept { PQclear(kept) }
                    answerTimedOut = true
                    return nil
                }
                var descriptor = pollfd(fd: PQsocket(conn), events: Int16(POLLIN), revents: 0)
                let ready = poll(&descriptor, 1, Int32(min(milliseconds, 60_000)))
                if ready < 0 && errno != EINTR { break }
                if ready > 0 && PQconsumeInput(conn) == 0 { break }
            }
            guard let next = PQgetResult(conn) else { break }
            // As PQexec does: the last result, unless an earlier one was an error.
            if let previous = kept {
                if PQresultStatus(previous) == PGRES_FATAL_ERROR {
                    PQclear(next)
                    continue
                }
                PQclear(previous)
            }
            kept = next
        }
        return kept
    }

    /// Lays the parameters out as libpq wants them, runs `call`, and checks the result's status.
    private func send(
        _ conn: OpaquePointer, _ parameters: [SQLValue],
        _ call: (Int32, UnsafePointer<UnsafePointer<CChar>?>?, UnsafePointer<Int32>?, UnsafePointer<Int32>?) -> OpaquePointer?
    ) throws -> OpaquePointer {
        let result = Self.withParameterLayout(parameters, call)
        guard let result else { throw lostOrFailed(conn) }
        switch PQresultStatus(result) {
        case PGRES_COMMAND_OK, PGRES_TUPLES_OK, PGRES_EMPTY_QUERY:
            return result
        default:
            defer { PQclear(result) }
            throw Self.error(from: result, conn: conn)
        }
    }

    /// Calls `call` with the parameters laid out as libpq wants them: values, lengths, formats.
    static func withParameterLayout<R>(
        _ parameters: [SQLValue],
        _ call: (Int32, UnsafePointer<UnsafePointer<CChar>?>?, UnsafePointer<Int32>?, UnsafePointer<Int32>?) -> R
    ) -> R {
        let count = parameters.count
        // Parameter buffers are allocated and freed explicitly: pointers into
        // temporary Swift arrays must not escape (see notes/swift-c.md).
        var values = [UnsafeMutablePointer<CChar>?](repeating: nil, count: count)
        var lengths = [Int32](repeating: 0, count: count)
        var formats = [Int32](repeating: 0, count: count)
        defer { for v in values { v?.deallocate() } }
        for (i, p) in parameters.enumerated() {
            switch p {
            case .null:
                break
            case .text(let s):
                let utf8 = Array(s.utf8)
                let buf = UnsafeMutablePointer<CChar>.allocate(capacity: utf8.count + 1)
                utf8.withUnsafeBufferPointer { src in
                    if let base = src.baseAddress { UnsafeMutableRawPointer(buf).copyMemory(from: base, byteCount: utf8.count) }
                }
                buf[utf8.count] = 0
                values[i] = buf
                lengths[i] = Int32(utf8.count)
            case .bytes(let b), .binary(let b, _):
                let buf = UnsafeMutablePointer<CChar>.allocate(capacity: max(b.count, 1))
                b.withUnsafeBufferPointer { src in
                    if let base = src.baseAddress { UnsafeMutableRawPointer(buf).copyMemory(from: base, byteCount: b.count) }
                }
                values[i] = buf
                lengths[i] = Int32(b.count)
                formats[i] = 1
            }
        }
        return values.withUnsafeBufferPointer { v in
            v.baseAddress!.withMemoryRebound(to: UnsafePointer<CChar>?.self, capacity: max(count, 1)) { vp in
                lengths.withUnsafeBufferPointer { l in
                    formats.withUnsafeBufferPointer { f in
                        call(Int32(count), count == 0 ? nil : UnsafePointer(vp), l.baseAddress, f.baseAddress)
                    }
                }
            }
        }
    }

    func lostOrFailed(_ conn: OpaquePointer) -> PostgresError {
        let message = String(cString: PQerrorMessage(conn)).trimmedLine
        return PQstatus(conn) == CONNECTION_OK ? .unexpectedResult(message) : .connectionLost(message)
    }

    static func error(from result: OpaquePointer, conn: OpaquePointer) -> PostgresError {
        func field(_ code: UInt8) -> String? {
            guard let p = PQresultErrorField(result, Int32(code)) else { return nil }
            return String(cString: p)
        }
        if let state = field(UInt8(ascii: "C")) {
            return .server(sqlState: state, message: field(UInt8(ascii: "M")) ?? "", detail: field(UInt8(ascii: "D")),
                           constraint: field(UInt8(ascii: "n")))
        }
        let message = String(cString: PQresultErrorMessage(result)).trimmedLine
        if PQstatus(conn) != CONNECTION_OK {
            return .connectionLost(message.isEmpty ? String(cString: PQerrorMessage(conn)).trimmedLine : message)
        }
        return .unexpectedResult(message)
    }

    static func read(_ result: OpaquePointer) -> QueryResult {
        let nrows = Int(PQntuples(result))
        let ncols = Int(PQnfields(result))
        var columns = [String]()
        columns.reserveCapacity(ncols)
        for c in 0..<ncols { columns.append(String(cString: PQfname(result, Int32(c)))) }
        var rows = [[String?]]()
        rows.reserveCapacity(nrows)
        for r in 0..<nrows {
            var row = [String?]()
            row.reserveCapacity(ncols)
            for c in 0..<ncols {
                if PQgetisnull(result, Int32(r), Int32(c)) == 1 {
                    row.append(nil)
                } else {
                    row.append(String(cString: PQgetvalue(result, Int32(r), Int32(c))))
                }
            }
            rows.append(row)
        }
        let affected = Int(String(cString: PQcmdTuples(result))) ?? 0
        return QueryResult(columns: columns, rows: rows, affectedRows: affected)
    }
}

/// Calls `body` with a NULL-terminated C array of C strings that live only for the call.
func withCStrings<R>(_ strings: [String], _ body: (UnsafePointer<UnsafePointer<CChar>?>) -> R) -> R {
    let buffers = strings.map { strdup($0) }
    defer { buffers.forEach { free($0) } }
    var pointers: [UnsafePointer<CChar>?] = buffers.map { $0.map { UnsafePointer<CChar>($0) } }
    pointers.append(nil)
    return pointers.withUnsafeBufferPointer { body($0.baseAddress!) }
}

extension String {
    /// libpq messages end in newlines and sometimes span lines; logs want one line.
    var trimmedLine: String {
        split(whereSeparator: { $0 == "\n" || $0 == "\r" }).map { $0.trimmingCharacters(in: .whitespaces) }.joined(separator: " ")
    }
}
