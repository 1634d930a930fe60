import Foundation
import LedgerCore
import LedgerPostgres
@testable import LedgerAPI
@testable import LedgerService
import LedgerHTTP
import LedgerTestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// exports.md: `ledger export orders|events` over a half-open period on the ledger's
/// recording time, against a real PostgreSQL.
@Suite("Exports for accounting (ledger export)")
final class ExportTests {
    let ledger: LedgerFixture
    let folder: URL
    init() throws {
        ledger = try .start("exports")
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("ledger-export-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    }
    deinit {
        ledger.stop()
        try? FileManager.default.removeItem(at: folder)
    }

    var env: [String: String] { ["DATABASE_URL": ledger.databaseURL] }

    /// Runs `ledger export` into `name`; the file's bytes and its manifest.
    func export(_ arguments: [String], into name: String) throws -> (bytes: [UInt8], manifest: JSONValue) {
        let run = CLIRun()
        let path = folder.appendingPathComponent(name).path
        let code = run(["export"] + arguments + ["--out", path], env: env)
        #expect(code == 0, "\(arguments): \(run.errorLines)")
        let bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: path)))
        let manifest = try JSONValue.parse([UInt8](Data(contentsOf: URL(fileURLWithPath: path + ".manifest.json"))))
        return (bytes, manifest)
    }

    static func csvRows(_ bytes: [UInt8]) -> [[String]] {
        // The test data holds no quotes, commas or line breaks inside cells.
        String(decoding: bytes, as: UTF8.self).components(separatedBy: "\r\n").dropLast().map { $0.components(separatedBy: ",") }
    }

    static func pause() { Thread.sleep(forTimeInterval: 0.02) }

    @Test("events: one row per event recorded in the period, in ledger order, with the status after it; the same bytes again; a manifest that adds up")
    func events() throws {
        Self.pause()
        let from = Timestamp.now()
        #expect(try ledger.register("E-1", amount: "40").status == 201)
        #expect(try ledger.sendWeb3(LedgerFixture.web3Body("E-1", status: 3, extra: #","txHash":"0xe1","tokenSymbol":"USDT""#)).status == 200)
        #expect(try ledger.register("-INJ", amount: "2.50").status == 201)
        let enrollment = #"{"provider":"bankpay","callback":"onSuccess","payload":{"type":"bankAccountAdded","data":{"intent_id":"in_1"}},"clientEventId":"7b7c2a4e-3f1d-4c8a-9e2b-5d6f7a8b9c0d"}"#
        #expect(try ledger.client.post("/v1/enrollments/ENR-X/client-events", token: ledger.ingest, json: enrollment).status == 201)
        Self.pause()
        let to = Timestamp.now()
        Self.pause()
        #expect(try ledger.sendWeb3(LedgerFixture.web3Body("E-1", status: 4)).status == 200, "recorded after the period")

        let period = ["events", "--from", from.rfc3339, "--to", to.rfc3339]
        let first = try export(period, into: "events.csv")
        let rows = Self.csvRows(first.bytes)
        #expect(rows.first == ExportKind.events.columns)
        let body = Array(rows.dropFirst())
        #expect(body.count == 4, "\(body)")
        let positions = body.compactMap { Int64($0[0]) }
        #expect(positions == positions.sorted() && positions.count == 4, "ledger order")
        #expect(body.map { $0[4] } == ["E-1", "E-1", "'-INJ", ""], "merchant_order_no, formula-guarded; none for an enrollment")
        #expect(body.map { $0[9] } == ["1", "3", "1", ""], "status_after")
        #expect(body[1][8] == "3" && body[1][10] == "40" && body[1][11] == "USDT" && body[1][12] == "0xe1", "\(body[1])")
        #expect(body[2][10] == "2.50", "amounts exactly as given")

        let manifest = first.manifest
        #expect(manifest["kind"]?.stringValue == "events" && manifest["format"]?.stringValue == "csv")
        #expect(manifest["from"]?.stringValue == from.rfc3339 && manifest["to"]?.stringValue == to.rfc3339)
        #expect(manifest["rows"]?.int64Value == 4)
        #expect(manifest["sha256"]?.stringValue == Hex.encode(Crypto.sha256(first.bytes)))
        #expect(manifest["highestPosition"]?.int64Value == positions.last)
        let totals = manifest["totals"]?.arrayValue ?? []
        #expect(totals.count == 1 && totals.first?["asset"]?.stringValue == "USDT" && totals.first?["rows"]?.int64Value == 3, "\(totals)")
        #expect(ExactDecimal(totals.first?["amount"]?.stringValue ?? "") == ExactDecimal("82.50"), "40 + 40 + 2.50: \(totals)")
        let head = try ledger.client.get("/v1/ledger/head", token: ledger.auditor)
        #expect(manifest["ledgerHead"]?["position"]?.int64Value == head["position"]?.int64Value)
        #expect(manifest["ledgerHead"]?["hash"]?.stringValue == head["hash"]?.stringValue)
        #expect(manifest["generatedAt"]?.stringValue.flatMap { Timestamp.parse($0) } != nil)

        #expect(try ledger.sendWeb3(LedgerFixture.web3Body("E-2", status: 3)).status == 200)
        let again = try export(period, into: "events-again.csv")
        #expect(again.bytes == first.bytes, "a closed period gives the same bytes")
        #expect(again.manifest["sha256"] == manifest["sha256"])

        // An export that may keep one order's state at a time folds the others again from
        // the store: the same bytes.
        let small = ExportSession(kind: .events, from: from, to: to, format: .csv, connection: try ledger.connect(), cachedStreams: 1)
        var smallBytes = [UInt8]()
        _ = try small.run(write: { smallBytes += $0 })
        #expect(smallBytes == first.bytes, "a cache of one state gives the same rows")

        // The next period starts with E-1's completion: its status after is folded from the
        // order's events before the period too.
        let next = try export(["events", "--from", to.rfc3339, "--to", Timestamp.now().rfc3339], into: "events-next.csv")
        let nextRows = Array(Self.csvRows(next.bytes).dropFirst())
        #expect(nextRows.first?[4] == "E-1" && nextRows.first?[9] == "4", "\(nextRows)")

        let jsonl = try export(period + ["--format", "jsonl"], into: "events.jsonl")
        let lines = String(decoding: jsonl.bytes, as: UTF8.self).split(separator: "\n").map(String.init)
        #expect(lines.count == 4)
        let second = try JSONValue.parse(Array(lines[1].utf8))
        #expect(second.objectFields?.map(\.0) == ExportKind.events.columns)
        #expect(second["status_after"]?.int64Value == 3 && second["amount"]?.stringValue == "40" && second["merchant_order_no"]?.stringValue == "E-1")
    }

    @Test("orders: those first paid in the period, each as it stood at the period's end; later events change nothing in it")
    func orders() throws {
        Self.pause()
        let from = Timestamp.now()
        #expect(try ledger.register("P-1", amount: "40").status == 201)
        #expect(try ledger.register("P-UNPAID", amount: "9").status == 201)
        #expect(try ledger.sendWeb3(LedgerFixture.web3Body("P-1", status: 3)).status == 200)
        #expect(try ledger.sendWeb3(LedgerFixture.web3Body("P-2", status: 4, amount: "12.345", extra: #","tokenSymbol":"BTC""#)).status == 200)
        Self.pause()
        let to = Timestamp.now()
        Self.pause()
        #expect(try ledger.sendWeb3(LedgerFixture.web3Body("P-1", status: 4)).status == 200, "completed after the period")
        #expect(try ledger.sendWeb3(LedgerFixture.web3Body("P-3", status: 3)).status == 200, "paid after the period")

        let period = ["orders", "--from", from.rfc3339, "--to", to.rfc3339]
        let first = try export(period, into: "orders.csv")
        let rows = Self.csvRows(first.bytes)
        #expect(rows.first == ExportKind.orders.columns)
        let body = Array(rows.dropFirst())
        #expect(body.map { $0[0] } == ["P-1", "P-2"], "first paid in the period, by that time: \(body)")
        #expect(body[0][3] == "3" && body[0][4] == "paid", "P-1 as it stood at the period's end, not completed: \(body[0])")
        let p1 = try ledger.order("P-1")
        #expect(p1["status"]?.int64Value == 4, "the order itself moved on")
        #expect(Int64(body[0][16]).map { $0 < (p1["lastPosition"]?.int64Value ?? 0) } == true, "last_position as of the period's end")
        #expect(body[1][5] == "BTC" && body[1][7] == "12.345", "\(body[1])")
        let totals = first.manifest["totals"]?.arrayValue ?? []
        #expect(totals.compactMap { $0["asset"]?.stringValue } == ["BTC", "USDT"], "\(totals)")

        let later = try export(period, into: "orders-again.csv")
        #expect(later.bytes == first.bytes, "a closed period gives the same bytes")
        let next = try export(["orders", "--from", to.rfc3339, "--to", Timestamp.now().rfc3339], into: "orders-next.csv")
        #expect(Self.csvRows(next.bytes).dropFirst().map { $0[0] } == ["P-3"], "late payments land in the period they were recorded in")
    }

    /// An append that skips a round trip takes its recording time up to 250 ms before it
    /// holds the append lock; a period that ended less than that ago may still gain one.
    @Test("a period that ended just now is read only once no append in flight can still record a time in it")
    func justClosedPeriod() throws {
        let from = Timestamp(seconds: Timestamp.now().seconds - 60)
        #expect(try ledger.register("J-1").status == 201)
        let to = Timestamp.now()
        let started = Date()
        let file = try export(["events", "--from", from.rfc3339, "--to", to.rfc3339], into: "just.csv")
        let waited = Date().timeIntervalSince(started)
        #expect(waited >= 0.25, "the export read the period after \(waited) s, inside the appends' recording lag")
        #expect(Self.csvRows(file.bytes).dropFirst().contains { $0[4] == "J-1" })
    }

    @Test("bad arguments are one line on stderr and exit 64; an unwritable --out is exit 1 and leaves no file behind")
    func badArguments() throws {
        for (arguments, fragment) in [(["export"], "orders or events"), (["export", "refunds", "--from", "2026-11-01", "--to", "2026-12-01"], "orders or events"),
                                      (["export", "events", "--from", "2026-12-01", "--to", "2026-11-01"], "before"),
                                      (["export", "events", "--from", "yesterday", "--to", "2026-11-01"], "--from"),
                                      (["export", "events", "--from", "2026-11-01", "--to", "2026-12-01", "--format", "xlsx"], "csv or jsonl"),
                                      (["export", "events", "--from", "2026-11-01", "--to", "2026-12-01", "--out", ""], "not nothing"),
                                      (["export", "events", "--from", "2026-11-01", "--to", "2026-12-01", "--out", NSTemporaryDirectory()], "not the folder"),
                                      (["export", "events", "--from", "2026-11-01", "--to", "2026-12-01", "--out", "/tmp"], "not the folder")] {
            let run = CLIRun()
            #expect(run(arguments, env: env) == 64, "\(arguments)")
            #expect(run.errorLines.count == 1 && run.errorLines[0].contains(fragment), "\(arguments): \(run.errorLines)")
            #expect(run.output.isEmpty)
        }
        let run = CLIRun()
        let missing = folder.appendingPathComponent("no/such/dir/out.csv").path
        #expect(run(["export", "events", "--from", "2026-11-01", "--to", "2026-12-01", "--out", missing], env: env) == 1)
        #expect(run.errorLines.count == 1, "\(run.errorLines)")
        #expect(!FileManager.default.fileExists(atPath: missing) && !FileManager.default.fileExists(atPath: missing + ".partial"))
    }

    @Test("a date means 00:00 UTC: a day's export holds what was recorded that day")
    func dates() throws {
        #expect(try ledger.register("D-1").status == 201)
        let today = String(Timestamp.now().rfc3339.prefix(10))
        let tomorrow = String(Timestamp(seconds: Timestamp.now().seconds + 86_400).rfc3339.prefix(10))
        let day = try export(["events", "--from", today, "--to", tomorrow], into: "day.csv")
        #expect(day.manifest["from"]?.stringValue == today + "T00:00:00Z", "\(day.manifest)")
        #expect(Self.csvRows(day.bytes).dropFirst().contains { $0[4] == "D-1" })
    }

    // MARK: over HTTP

    /// `batches` × 800 registrations appended straight to the store (events only).
    func seedRegistrations(prefix: String, batches: Int) throws {
        let c = try ledger.connect()
        defer { c.close() }
        for batch in 0..<batches {
            let events = try (0..<800).map { i -> NewEvent in
                let body = Array(#"{"merchantOrderNo":"\#(prefix)-\#(batch)-\#(i)","provider":"web3","amount":"1.5","asset":"USDT"}"#.utf8)
                let registration = try OrderRequests.registration(body: body, receivedAt: .now())
                return EventMapping.newEvent(.registered(registration), raw: body, receipt: Receipt(requestID: "r", verifiedBy: "token:t"))
            }
            _ = try c.transaction { try EventStore().append(events, on: $0) }
        }
    }

    @Test("the database connection lost in the middle of an HTTP export: the body ends without its last chunk, so it cannot pass for whole")
    func connectionLostMidBody() throws {
        let from = Timestamp.now()
        // 32,000 rows, about 7 MB of CSV: more than the server's buffer and both sockets' hold.
        try seedRegistrations(prefix: "L", batches: 40)
        Self.pause()
        let to = Timestamp.now()
        let connection = try TestConnection(port: ledger.port, timeout: 20, receiveBufferBytes: 4_096)
        try connection.send("GET /v1/exports/events?from=\(Self.q(from.rfc3339))&to=\(Self.q(to.rfc3339)) HTTP/1.1\r\nHost: t\r\nAuthorization: Bearer \(ledger.accountant)\r\n\r\n")
        // Once the head has come (the body has begun), the export's backend (it names itself) is ended.
        let head = (try? connection.receive(exactly: 64)) ?? []
        #expect(head.count == 64 && String(decoding: head.prefix(12), as: UTF8.self) == "HTTP/1.1 200", "\(String(decoding: head, as: UTF8.self))")
        let ended = eventually(within: 15, every: 0.01) {
            try ledger.count("""
                SELECT count(pg_terminate_backend(pid)) AS n FROM pg_stat_activity
                 WHERE datname = current_database() AND application_name = 'ledger export' AND query NOT LIKE '%pg_advisory_xact_lock%'
                   AND query NOT LIKE 'SET %' 
                """) == 1
        }
        #expect(ended, "the export's connection was never seen reading")
        let (bytes, closed) = connection.readUntilClosed(within: 15)
        #expect(closed, "the server must close the connection")
        let text = String(decoding: head + bytes, as: UTF8.self)
        #expect(text.contains("position,recorded_at"), "\(text.prefix(300))")
        #expect(!text.hasSuffix("\r\n0\r\n\r\n"), "a cut body must not end with the last chunk")
        #expect(text.utf8.count < 6_000_000, "the body was cut short: \(text.utf8.count) bytes")
        // Exports work again at once: the failed one gave its place back.
        #expect(eventually(within: 10) {
            try ledger.client.get("/v1/exports/orders?from=2026-11-01&to=2026-11-02", token: ledger.accountant).status == 200
        })
    }

    /// A URL query value: `+` in an RFC 3339 offset, `:` and the like percent-encoded.
    static func q(_ text: String) -> String {
        text.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? text
    }

    @Test("GET /v1/exports/events streams the same bytes as ledger export, csv and jsonl, across many fetches")
    func overHTTP() throws {
        Self.pause()
        let from = Timestamp.now()
        // 2,400 events: more than two of the session's fetches of 1,000 rows.
        try seedRegistrations(prefix: "H", batches: 3)
        #expect(try ledger.sendWeb3(LedgerFixture.web3Body("H-0-1", status: 3)).status == 200)
        Self.pause()
        let to = Timestamp.now()
        for format in ["csv", "jsonl"] {
            let file = try export(["events", "--from", from.rfc3339, "--to", to.rfc3339, "--format", format], into: "http.\(format)")
            let reply = try ledger.client.get("/v1/exports/events?from=\(Self.q(from.rfc3339))&to=\(Self.q(to.rfc3339))&format=\(format)",
                                              token: ledger.accountant)
            #expect(reply.status == 200, "\(reply.status) \(String(decoding: reply.body.prefix(300), as: UTF8.self))")
            #expect(reply.header("Content-Type") == (format == "csv" ? "text/csv; charset=utf-8" : "application/x-ndjson"))
            #expect(reply.header("Transfer-Encoding")?.lowercased() == "chunked", "streamed, not buffered")
            #expect(reply.body == file.bytes, "\(format): \(reply.body.count) bytes over HTTP against \(file.bytes.count) from the CLI")
            #expect(file.manifest["rows"]?.int64Value == 2_401)
        }
        // Clients that go away mid-body give their export's place back: more exports than
        // may run at once, each dropped after its head, then three whole ones.
        for attempt in 0..<4 {
            let connection = try TestConnection(port: ledger.port)
            try connection.send("GET /v1/exports/events?from=\(Self.q(from.rfc3339))&to=\(Self.q(to.rfc3339)) HTTP/1.1\r\nHost: t\r\nAuthorization: Bearer \(ledger.accountant)\r\n\r\n")
            let head = connection.receiveSome(upTo: 512)
            // Two run at once; the server may not have seen the first ones go yet (then 503).
            let status = String(decoding: head.prefix(12), as: UTF8.self)
            #expect(status == "HTTP/1.1 200" || (attempt >= 2 && status == "HTTP/1.1 503"), "\(String(decoding: head.prefix(40), as: UTF8.self))")
        }
        for _ in 0..<3 {
            let again = eventually(within: 10) {
                try ledger.client.get("/v1/exports/orders?from=2026-11-01&to=2026-11-02", token: ledger.accountant).status == 200
            }
            #expect(again, "an export's place was not given back")
        }
        let status = String(decoding: try ledger.client.get("/v1/exports/events?from=\(Self.q(from.rfc3339))&to=\(Self.q(to.rfc3339))",
                                                               token: ledger.auditor).body, as: UTF8.self)
        #expect(status.contains(",H-0-1,StatusObserved,webhook,web3,3,3,40,"), "the auditor may export too; the webhook's row shows status 3")
    }

    @Test("an export to --out stopped by SIGINT, SIGTERM or SIGHUP midway removes its temporary files and leaves no FILE; under nohup a hangup changes nothing", .timeLimit(.minutes(3)))
    func interruptedLeavesNothing() throws {
        try seedRegistrations(prefix: "S", batches: 60)   // 48,000 events: a debug build's export takes a second or more
        for signal in [SIGINT, SIGTERM, SIGHUP] {
            let out = folder.appendingPathComponent("stopped-\(signal).csv").path
            let (writing, status) = try exportStopped(by: signal, out: out)
            #expect(writing, "signal \(signal): the export never began writing")
            #expect(status & 0x7f == signal, "signal \(signal): the export should end by the signal, not exit \((status >> 8) & 0xff)")
            let left = try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { $0.hasPrefix("stopped-\(signal).csv") && !$0.hasSuffix(".log") }
            #expect(left.isEmpty, "signal \(signal) left \(left)")
        }
        // Under nohup a hangup is ignored, as before: the export runs to its end.
        let out = folder.appendingPathComponent("nohup.csv").path
        let (writing, status) = try exportStopped(by: SIGHUP, out: out, launcher: ["/usr/bin/nohup"])
        #expect(writing && status == 0, "under nohup: wait status \(status)")
        #expect(FileManager.default.fileExists(atPath: out) && FileManager.default.fileExists(atPath: out + ".manifest.json"))
    }

    /// Starts `ledger export events --out out` (after `launcher`, if any), sends `signal` once
    /// rows are being written to the temporary file, and reaps it: whether it had begun
    /// writing, and its wait status.
    func exportStopped(by signal: Int32, out: String, launcher: [String] = []) throws -> (writing: Bool, status: Int32) {
        var environment = LedgerFixture.environment(databaseURL: ledger.databaseURL)
        environment["PATH"] = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        let pid = try spawnLogged(launcher + [try ServeProcess.executable(), "export", "events", "--from", "2000-01-01", "--to", "2100-01-01", "--out", out],
                                  environment: environment, log: out + ".log")
        let writing = eventually(within: 30, every: 0.005) {
            ((try? FileManager.default.attributesOfItem(atPath: out + ".partial")[.size] as? Int) ?? 0) > 0
        }
        kill(pid, signal)
        var status: Int32 = 0
        while waitpid(pid, &status, 0) == -1 && errno == EINTR {}
        return (writing, status)
    }

    @Test("an export's place is free once its body has ended, before the server lets go of the body, so a client that read one export whole never meets a 503 for the next")
    func placeFreedAtTheEnd() throws {
        try seedRegistrations(prefix: "B", batches: 2)
        let exports = ExportResponses(connectionString: ledger.databaseURL, maxRunning: 1)
        let query = ["from": "2000-01-01", "to": "2100-01-01"]
        var held: [HTTPResponse] = []
        for kind in [ExportKind.events, .orders, .events] {
            let response = try exports.response(kind, query: query)
            guard case .stream(let next) = response.body else {
                Issue.record("\(kind): not streamed")
                return
            }
            var bytes = 0
            while let chunk = try next() { bytes += chunk.count }
            // 1,600 registrations, none paid: every event a row, and the orders export its header alone.
            #expect(kind == .orders ? bytes > 0 : bytes > 1_600 * 20, "\(kind): \(bytes) bytes")
            held.append(response)   // the body is still held, as the server holds it after its last chunk
        }
        #expect(held.count == 3)
        // While one runs, another is refused with 503, and its place comes back when it fails or is dropped.
        let running = try exports.response(.events, query: query)
        #expect(throws: ServiceError.self) { try exports.response(.orders, query: query) }
        _ = running
    }

    @Test("an export that waited its 10 s for the append lock (a rebuild's swap holding it) is a 503 problem (retry), not a 500")
    func lockWaitIs503() throws {
        #expect(try ledger.register("LW-1").status == 201)
        let holder = try ledger.connect()
        defer { holder.close() }
        try holder.query("BEGIN")
        try holder.query("SELECT pg_advisory_xact_lock($1)", [.int(AppendLock.key)])
        let started = Date()
        // The export route's answer, called directly: the fixture's request timeout is shorter than the wait.
        let exports = ExportResponses(connectionString: ledger.databaseURL, maxRunning: 1)
        var failure: Error?
        do {
            let response = try exports.response(.events, query: ["from": "2000-01-01", "to": "2001-01-01"])
            if case .stream(let next) = response.body { while try next() != nil {} }
        } catch {
            failure = error
        }
        try holder.query("ROLLBACK")
        #expect(Date().timeIntervalSince(started) >= Double(ExportSession.lockWaitSeconds) - 0.5)
        let answer = ServiceError.from(try #require(failure, "the export waited and went on"))
        #expect(answer.isUnavailable, "\(answer)")
        let problem = answer.response
        #expect(problem.status == 503 && problem.headers.contains { $0.0 == "Retry-After" }, "\(problem.status) \(problem.headers)")
        #expect(String(describing: answer).contains("a lock it needs is held"), "\(answer)")
        #expect(try ledger.client.get("/v1/exports/events?from=2000-01-01&to=2001-01-01", token: ledger.auditor).status == 200,
                "once the lock is free the same request is answered")
    }

    @Test("an export (or its manifest) over HTTP without from or to, with a time without its offset or finer than microseconds, with to before from, an unknown format or parameter, or a parameter given twice is 400 with a problem")
    func badHTTPParameters() throws {
        for query in ["", "?from=2026-11-01", "?to=2026-12-01", "?from=2026-12-01&to=2026-11-01", "?from=soon&to=2026-12-01",
                      "?from=2026-11-01T00:00:00&to=2026-12-01", "?from=2026-11-01%2000:00:00Z&to=2026-12-01",
                      "?from=2026-11-01T00:00:00.1234567Z&to=2026-12-01",
                      "?from=2026-11-01&to=2026-12-01&format=xlsx", "?from=2026-11-01&to=2026-12-01&limit=5",
                      "?from=2026-11-01&to=2026-12-01&from=2026-10-01", "?from=2026-11-01&to=2026-12-01&format=csv&format=jsonl"] {
            for kind in ["orders", "events", "orders/manifest", "events/manifest"] {
                let reply = try ledger.client.get("/v1/exports/\(kind)\(query)", token: ledger.accountant)
                #expect(reply.status == 400 && reply.isProblem, "\(kind)\(query) → \(reply)")
            }
        }
        let ok = try ledger.client.get("/v1/exports/orders?from=2026-11-01&to=2026-12-01", token: ledger.accountant)
        #expect(ok.status == 200 && String(decoding: ok.body, as: UTF8.self) == String(decoding: ExportFormat.csv.header(ExportKind.orders.columns), as: UTF8.self),
                "an empty period is the header alone: \(ok)")
    }
}
