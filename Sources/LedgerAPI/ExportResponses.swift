import LedgerCore
import LedgerHTTP
import LedgerService
import LedgerPostgres
import Synchronization

/// `GET /v1/exports/orders` and `/v1/exports/events` (http-api.md): `from`, `to`
/// (dates or RFC 3339, half-open), `format=csv|jsonl`; the same bytes as `ledger
/// export`, streamed. Each export has a connection of its own (its transaction spans
/// the whole body), so exports never take the connections reads and writes use; at
/// most `maxRunning` run at once.
final class ExportResponses: Sendable {
    let connectionString: String
    let maxRunning: Int
    /// Signs the manifests of the companion routes, when a key is configured.
    let signer: CheckpointSigner?
    private let running = Mutex(0)

    init(connectionString: String, maxRunning: Int = 2, signer: CheckpointSigner? = nil) {
        self.connectionString = connectionString
        self.maxRunning = maxRunning
        self.signer = signer
    }

    func response(_ kind: ExportKind, query: [String: String]) throws -> HTTPResponse {
        let (session, slot) = try start(kind, query: query)
        let body = StreamedExport(session, slot: slot)
        // The snapshot is taken and the first rows made before the status is sent, so a
        // database that cannot be reached is a 503, and a broken chain in them a 500, not a cut-off 200.
        try body.prime()
        let name = "\(kind.rawValue)-\(session.from.rfc3339)-\(session.to.rfc3339).\(session.format.rawValue)"
        return HTTPResponse(status: 200, headers: [
            ("Content-Type", session.format == .csv ? "text/csv; charset=utf-8" : "application/x-ndjson"),
            ("Content-Disposition", "attachment; filename=\"\(name)\""),
            ("Cache-Control", "no-store"),
        ], body: .stream { try body.next() })
    }

    /// The companion route `GET /v1/exports/{kind}/manifest`: the same export run through to
    /// its end, its bytes only hashed, answered with the manifest `ledger export` writes
    /// (signed when a key is configured). A closed period gives the same bytes every time,
    /// so this manifest describes the file the export route streams for the same query.
    func manifest(_ kind: ExportKind, query: [String: String]) throws -> HTTPResponse {
        let (session, slot) = try start(kind, query: query)
        defer { withExtendedLifetime(slot) {} }
        let manifest = try session.run(write: { _ in })
        return .json(200, JSONSerializer.bytes(signer.map { $0.signed(manifest) } ?? manifest))
    }

    /// Checks the query, takes a running export's place and opens the export's connection.
    private func start(_ kind: ExportKind, query: [String: String]) throws -> (ExportSession, Slot) {
        let from = try Self.time(query, "from"), to = try Self.time(query, "to")
        guard from.microseconds < to.microseconds else {
            throw ServiceError.badRequest("from \(from.rfc3339) must come before to \(to.rfc3339)")
        }
        let formatText = query["format"] ?? "csv"
        guard let format = ExportFormat(rawValue: formatText) else {
            throw ServiceError.badRequest("format must be csv or jsonl, not \(formatText)")
        }
        if let unknown = Set(query.keys).subtracting(["from", "to", "format"]).sorted().first {
            throw ServiceError.badRequest("unknown parameter \(unknown): an export takes from, to and format")
        }
        guard running.withLock({ n -> Bool in
            guard n < maxRunning else { return false }
            n += 1
            return true
        }) else {
            throw ServiceError.unavailable("\(maxRunning == 1 ? "an export is" : "\(maxRunning) exports are") running, as many as may run at once; retry when one has finished")
        }
        let slot = Slot { [self] in self.running.withLock { $0 -= 1 } }
        let connection = try PostgresConnection(connectionString: connectionString, connectTimeoutSeconds: 2,
                                                deadline: .now + .seconds(5))
        return (ExportSession(kind: kind, from: from, to: to, format: format, connection: connection,
                              newestNote: signer?.newestNote), slot)
    }

    /// The request's parameters, each given once: `from=...&from=...` names two periods, and
    /// an accountant must not get whichever one the server happened to read.
    static func query(of request: HTTPRequest) throws -> [String: String] {
        var seen = Set<String>()
        for item in request.queryItems where !seen.insert(item.name).inserted {
            throw ServiceError.badRequest("\(item.name) is given more than once; an export takes each of from, to and format once")
        }
        return request.query
    }

    private static func time(_ query: [String: String], _ name: String) throws -> Timestamp {
        guard let text = query[name], !text.isEmpty else {
            throw ServiceError.badRequest("\(name) is required: \(TimeBound.forms)")
        }
        return try TimeQuery.parse(text, name: name)
    }

    /// A running export's place: freed once, when the export ends (its last byte made, or
    /// a failure), or when the body is dropped, whichever comes first. Freeing it at the end,
    /// before the response's closing chunk is sent, means a client that has read one export
    /// whole always finds its place free for the next.
    final class Slot: Sendable {
        private let pending: Mutex<(@Sendable () -> Void)?>
        init(_ release: @escaping @Sendable () -> Void) { pending = Mutex(release) }
        func release() { pending.withLock { f -> (@Sendable () -> Void)? in defer { f = nil }; return f }?() }
        deinit { release() }
    }
}

/// An export session as a streamed body. The server's pump calls `next` from one worker
/// at a time; the lock only makes that safe to state. Dropping it (the client went away)
/// closes the session's connection, which ends its transaction.
final class StreamedExport: @unchecked Sendable {
    private let lock = Mutex(())
    private var session: ExportSession?
    private var primed: [UInt8]?
    private let slot: ExportResponses.Slot

    init(_ session: ExportSession, slot: ExportResponses.Slot) {
        self.session = session
        self.slot = slot
    }

    /// The header and the first rows: a fault in those (the database gone, a broken hash
    /// chain) is then answered as a problem, not as a 200 cut off.
    func prime() throws {
        try lock.withLock { _ in
            primed = try session?.next()
            if primed != nil, let rows = try session?.next() { primed! += rows }
        }
    }

    func next() throws -> [UInt8]? {
        let (chunk, ended): ([UInt8]?, Bool) = try lock.withLock { _ in
            if let first = primed {
                primed = nil
                return (first, false)
            }
            guard session != nil else { return (nil, false) }
            do {
                guard let chunk = try session!.next() else {
                    session = nil   // ends the connection now, not when the server lets go of the body
                    return (nil, true)
                }
                return (chunk, false)
            } catch {
                session = nil
                slot.release()
                throw error
            }
        }
        // The session (and its connection) is gone by now: only then is its place given back.
        if ended { slot.release() }
        return chunk
    }
}
