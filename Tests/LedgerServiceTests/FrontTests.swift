import Foundation
import LedgerCore
import LedgerPostgres
@testable import LedgerService
import LedgerTestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// A child process spawned with posix_spawn and reaped with waitpid (as `ServeProcess`).
private final class Child: @unchecked Sendable {
    // @unchecked: `pid` is immutable; `status` is only touched by the test's thread.
    let pid: pid_t
    let log: String
    private var status: Int32?

    init(_ arguments: [String], log: String) throws {
        self.log = log
        pid = try spawnLogged(arguments, environment: ProcessInfo.processInfo.environment, log: log)
    }

    var output: String { (try? String(contentsOfFile: log, encoding: .utf8)) ?? "" }

    var hasExited: Bool {
        if status != nil { return true }
        var raw: Int32 = 0
        if waitpid(pid, &raw, WNOHANG) == pid { status = raw; return true }
        return false
    }

    /// Waits for the exit; the exit code, or nil when it outlived `seconds` (then it is killed).
    func exitCode(within seconds: Double) -> Int32? {
        let deadline = Date(timeIntervalSinceNow: seconds)
        while Date() < deadline {
            if hasExited, let status { return (status & 0x7f) == 0 ? (status >> 8) & 0xff : -1 }
            usleep(20_000)
        }
        stop()
        return nil
    }

    func stop() {
        guard !hasExited else { return }
        kill(pid, SIGTERM)
        if exitCodeQuietly(within: 5) == nil {
            kill(pid, SIGKILL)
            var raw: Int32 = 0
            while waitpid(pid, &raw, 0) == -1 && errno == EINTR {}
            status = raw
        }
    }

    private func exitCodeQuietly(within seconds: Double) -> Int32? {
        let deadline = Date(timeIntervalSinceNow: seconds)
        while Date() < deadline {
            if hasExited { return status }
            usleep(20_000)
        }
        return nil
    }

    deinit { stop() }

    /// Runs a command to its end: its exit code and output (stdout and stderr together).
    static func run(_ arguments: [String], within seconds: Double = 60) throws -> (code: Int32?, output: String) {
        let log = NSTemporaryDirectory() + "ledger-child-\(UUID().uuidString).log"
        defer { try? FileManager.default.removeItem(atPath: log) }
        let child = try Child(arguments, log: log)
        let code = child.exitCode(within: seconds)
        return (code, child.output)
    }
}

/// nginx started on Ops/deploy/nginx-ledger.conf itself: the file is rendered with this test's
/// ports and a throwaway self-signed certificate (made here with `openssl req`), nothing else changed.
private final class NginxFront: @unchecked Sendable {
    // @unchecked: every stored property is immutable after init.
    let directory: String
    let tlsPort: Int
    let plainPort: Int
    private let process: Child

    static var repositoryRoot: URL {
        var root = URL(fileURLWithPath: #filePath)
        while root.path != "/" && !FileManager.default.fileExists(atPath: root.appendingPathComponent("Package.swift").path) {
            root.deleteLastPathComponent()
        }
        return root
    }

    static func nginxBinary() throws -> String {
        let path = (ProcessInfo.processInfo.environment["PATH"] ?? "") + ":/usr/sbin:/sbin"
        for folder in path.split(separator: ":") where FileManager.default.isExecutableFile(atPath: "\(folder)/nginx") {
            return "\(folder)/nginx"
        }
        throw ClientError.io("nginx is not installed: Ops/test installs Debian's nginx (ensure_packages in Ops/lib/common.sh)")
    }

    init(upstreamPort: Int) throws {
        let nginx = try Self.nginxBinary()
        directory = NSTemporaryDirectory() + "ledger-front-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory + "/temp", withIntermediateDirectories: true,
                                                attributes: [.posixPermissions: 0o777])
        chmod(directory, 0o755)
        let made = try Child.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
                                  "-nodes", "-days", "1", "-subj", "/CN=localhost",
                                  "-keyout", directory + "/key.pem", "-out", directory + "/cert.pem"])
        guard made.code == 0 else { throw ClientError.io("openssl req failed: \(made.output)") }

        tlsPort = try freeLoopbackPort()
        plainPort = try freeLoopbackPort()
        var site = try String(contentsOf: Self.repositoryRoot.appendingPathComponent("Ops/deploy/nginx-ledger.conf"), encoding: .utf8)
        for (from, to) in [
            ("listen 443 ssl;", "listen 127.0.0.1:\(tlsPort) ssl;"),
            ("listen 80;", "listen 127.0.0.1:\(plainPort);"),
            ("server 127.0.0.1:8080 ", "server 127.0.0.1:\(upstreamPort) "),
            ("/etc/ssl/ledger/fullchain.pem", directory + "/cert.pem"),
            ("/etc/ssl/ledger/privkey.pem", directory + "/key.pem"),
        ] {
            let parts = site.components(separatedBy: from)
            guard parts.count == 2 else {
                throw ClientError.io("Ops/deploy/nginx-ledger.conf has \(parts.count - 1) occurrences of \"\(from)\", the test expects one")
            }
            site = parts.joined(separator: to)
        }
        try site.write(toFile: directory + "/site.conf", atomically: true, encoding: .utf8)
        // The main context Debian's /etc/nginx/nginx.conf would give, with this folder's paths.
        let temp = directory + "/temp"
        let main = """
            daemon off;
            worker_processes 1;
            pid \(directory)/nginx.pid;
            error_log \(directory)/error.log warn;
            events { worker_connections 4096; }
            http {
                access_log off;
                client_body_temp_path \(temp)/body;
                proxy_temp_path \(temp)/proxy;
                fastcgi_temp_path \(temp)/fastcgi;
                uwsgi_temp_path \(temp)/uwsgi;
                scgi_temp_path \(temp)/scgi;
                include \(directory)/site.conf;
            }
            """
        try main.write(toFile: directory + "/nginx.conf", atomically: true, encoding: .utf8)
        process = try Child([nginx, "-p", directory, "-c", directory + "/nginx.conf", "-e", directory + "/error.log"],
                            log: directory + "/stdout.log")
        let up = eventually(within: 10, every: 0.05) { [tlsPort, process] in
            if process.hasExited { return false }
            return (try? TestConnection(port: tlsPort, timeout: 1)) != nil
        }
        guard up else {
            let errors = (try? String(contentsOfFile: directory + "/error.log", encoding: .utf8)) ?? ""
            throw ClientError.io("nginx did not start: \(process.output) \(errors)")
        }
    }

    func stop() { process.stop() }

    deinit {
        process.stop()
        try? FileManager.default.removeItem(atPath: directory)
    }
}

/// What `Ops/deploy/slowloris.py` printed.
private struct DrillResult: CustomStringConvertible {
    let json: JSONValue
    var description: String { json.description }
    func int(_ key: String) -> Int { Int(json[key]?.int64Value ?? -1) }
    func double(_ key: String) -> Double { json[key]?.numberLiteral.flatMap(Double.init) ?? -1 }
    var failedProbes: [String] { json["probes_failed"]?.arrayValue?.compactMap(\.stringValue) ?? ["(unreadable)"] }
}

private func slowloris(port: Int, tls: Bool, connections: Int, seconds: Int) throws -> DrillResult {
    let script = NginxFront.repositoryRoot.appendingPathComponent("Ops/deploy/slowloris.py").path
    var arguments = ["python3", script, "--port", String(port), "--connections", String(connections), "--seconds", String(seconds)]
    if tls { arguments.append("--tls") }
    let run = try Child.run(arguments, within: Double(seconds) + 60)
    guard run.code == 0, let line = run.output.split(separator: "\n").last, let json = try? JSONValue.parse(Array(line.utf8)) else {
        throw ClientError.io("slowloris.py failed (exit \(run.code.map(String.init) ?? "none")): \(run.output)")
    }
    return DrillResult(json: json)
}

/// Python's http.client over TLS, which writes a whole request before it reads the answer.
private func pythonRequest(port: Int, method: String, path: String, body: Int = 0, headers: [String: String] = [:]) throws -> (status: Int, contentType: String, body: String) {
    let script = """
        import http.client, json, ssl, sys
        c = http.client.HTTPSConnection("127.0.0.1", \(port), timeout=10, context=ssl._create_unverified_context())
        try:
            c.request("\(method)", "\(path)", body=b"x" * \(body) if \(body) else None, headers=json.loads(sys.argv[1]))
            r = c.getresponse()
            print(json.dumps({"status": r.status, "type": r.getheader("Content-Type") or "", "body": r.read().decode()}))
        except Exception as e:
            print(json.dumps({"status": 0, "type": "", "body": type(e).__name__ + ": " + str(e)}))
        """
    let headerJSON = "{" + headers.map { "\"\($0.key)\": \"\($0.value)\"" }.joined(separator: ",") + "}"
    let run = try Child.run(["python3", "-c", script, headerJSON])
    guard let line = run.output.split(separator: "\n").last, let json = try? JSONValue.parse(Array(line.utf8)) else {
        throw ClientError.io("python3 failed: \(run.output)")
    }
    return (Int(json["status"]?.int64Value ?? -1), json["type"]?.stringValue ?? "", json["body"]?.stringValue ?? "")
}

/// Raw bytes over TLS with Python's ssl module: everything the front sends back until it closes.
private func pythonRaw(port: Int, _ request: String) throws -> String {
    let script = """
        import socket, ssl, sys
        s = ssl._create_unverified_context().wrap_socket(socket.create_connection(("127.0.0.1", \(port)), timeout=5))
        s.sendall(sys.argv[1].encode())
        out = b""
        try:
            while True:
                d = s.recv(65536)
                if not d: break
                out += d
        except Exception:
            pass
        sys.stdout.write(out.decode(errors="replace"))
        """
    return try Child.run(["python3", "-c", script, request]).output
}

@Suite("The production front: nginx on Ops/deploy/nginx-ledger.conf before ledger serve", .serialized)
final class FrontTests {
    let db: TestDatabase
    let ledger: ServeProcess
    private let front: NginxFront

    init() throws {
        db = try TestDatabase.create("front")
        // A small connection limit, so that slow clients reaching the ledger would exhaust it.
        ledger = try ServeProcess(databaseURL: db.url, environment: [
            "LEDGER_HTTP_MAX_CONNECTIONS": "64", "LEDGER_HTTP_MAX_CONNECTIONS_PER_IP": "0",
        ])
        guard ledger.waitUntilServing(within: 30) else { throw ClientError.io("ledger serve did not come up: \(ledger.logText)") }
        front = try NginxFront(upstreamPort: ledger.port)
    }

    deinit {
        front.stop()
        ledger.signal(SIGTERM)
        LedgerFixture.drop(db)
    }

    @Test("300 connections sending their heads a byte a second for 15 s through the front: every ordinary request is served meanwhile, and the front closes each slow one at its 10 s header timeout")
    func slowlorisThroughTheFront() throws {
        let drill = try slowloris(port: front.tlsPort, tls: true, connections: 300, seconds: 15)
        #expect(drill.int("slow_opened") == 300, "\(drill)")
        #expect(drill.failedProbes.isEmpty, "ordinary requests failed during the attack: \(drill)")
        #expect(drill.int("probes_ok") >= 20, "\(drill)")
        #expect(drill.double("probe_slowest_s") < 2, "\(drill)")
        #expect(drill.int("slow_closed_by_server") == 300 && drill.int("slow_still_open") == 0, "\(drill)")
        #expect(drill.double("slow_longest_life_s") < 12 && drill.double("slow_shortest_life_s") > 8, "\(drill)")
    }

    @Test("the same slow connections straight at ledger serve (64 connections) starve ordinary requests: what the front is for")
    func slowlorisWithoutTheFrontStarvesTheLedger() throws {
        let drill = try slowloris(port: ledger.port, tls: false, connections: 300, seconds: 6)
        #expect(drill.int("probes_ok") == 0 && !drill.failedProbes.isEmpty, "\(drill)")
        // And the ledger recovers once they are gone.
        #expect(eventually(within: 20) { try HTTPClient(port: ledger.port, timeout: 2).get("/healthz").status == 200 })
    }

    @Test("through the front a signed webhook over TLS is stored, and plain HTTP is redirected to https")
    func webhookThroughTheFront() throws {
        let body = LedgerFixture.web3Body("FRONT-1", status: 3)
        let timestamp = String(Timestamp.now().seconds)
        // The body goes as text: python3 -c gets it as an argument.
        let script = """
            import http.client, ssl, sys
            c = http.client.HTTPSConnection("127.0.0.1", \(front.tlsPort), timeout=10, context=ssl._create_unverified_context())
            c.request("POST", "/v1/webhooks/web3", body=sys.argv[1].encode(), headers={"Content-Type": "application/json",
                      "X-Pay-Timestamp": sys.argv[2], "X-Pay-Signature": sys.argv[3]})
            r = c.getresponse()
            print(r.status, r.read().decode())
            """
        let run = try Child.run(["python3", "-c", script, String(decoding: body, as: UTF8.self), timestamp,
                                 Web3Webhook.signature(key: "key-new", timestamp: timestamp, body: body)])
        #expect(run.output.hasPrefix("200 "), "\(run.output)")
        let connection = try PostgresConnection(connectionString: db.url)
        defer { connection.close() }
        let stored = try connection.query("SELECT count(*) AS n FROM ledger.events WHERE stream = 'order-FRONT-1'").int64(0, "n")
        #expect(stored == 1)

        let plain = try TestConnection(port: front.plainPort)
        try plain.send("GET /healthz HTTP/1.1\r\nHost: ledger.example.com\r\nConnection: close\r\n\r\n")
        let redirect = try plain.readResponse()
        #expect(redirect.status == 308 && redirect.header("Location") == "https://ledger.example.com/healthz", "\(redirect)")
    }

    @Test("through the front a malformed Content-Length (5, 5; -5; +67; 0x10; empty) gets one 400 problem+json, where libmicrohttpd alone sends its header block twice")
    func malformedContentLengthThroughTheFront() throws {
        for value in ["5, 5", "-5", "+67", "0x10", ""] {
            let wire = try pythonRaw(port: front.tlsPort, "POST /v1/orders HTTP/1.1\r\nHost: t\r\nContent-Length: \(value)\r\n\r\nhello")
            #expect(wire.components(separatedBy: "HTTP/1.1 ").count == 2, "\"\(value)\": \(wire)")
            #expect(wire.hasPrefix("HTTP/1.1 400 ") && wire.contains("application/problem+json") && wire.contains("\"status\":400"),
                    "\"\(value)\": \(wire)")
        }
    }

    @Test("through the front a chunk declared larger than the body limit (2 MiB) gets 413 problem+json at once, before any more of it is sent; an absurd one (7fffffffffffffff) 400")
    func hugeChunkThroughTheFront() throws {
        for (size, status) in [("200000", 413), ("7fffffffffffffff", 400)] {
            let started = Date()
            let wire = try pythonRaw(port: front.tlsPort,
                                     "POST /v1/webhooks/web3 HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n\(size)\r\nabc")
            #expect(wire.hasPrefix("HTTP/1.1 \(status) ") && wire.contains("application/problem+json")
                    && wire.contains("\"status\":\(status)"), "\(size): \(wire)")
            #expect(Date().timeIntervalSince(started) < 4, "\(size): answered after \(Date().timeIntervalSince(started)) s")
        }
    }

    @Test("through the front an accountant's export is passed through: 200, chunked, the CSV header row")
    func exportThroughTheFront() throws {
        let connection = try PostgresConnection(connectionString: db.url)
        defer { connection.close() }
        let token = try TokenIssuer().create(role: .accountant, name: "front-accounts", expiresAt: nil, on: connection)
        let script = """
            import http.client, ssl, sys
            c = http.client.HTTPSConnection("127.0.0.1", \(front.tlsPort), timeout=10, context=ssl._create_unverified_context())
            c.request("GET", "/v1/exports/orders?from=2026-11-01&to=2026-12-01", headers={"Authorization": "Bearer " + sys.argv[1]})
            r = c.getresponse()
            print(r.status, r.getheader("Transfer-Encoding"), repr(r.read().decode()))
            """
        let run = try Child.run(["python3", "-c", script, token])
        let header = String(decoding: ExportFormat.csv.header(ExportKind.orders.columns), as: UTF8.self)
        #expect(run.output.hasPrefix("200 chunked ") && run.output.contains(String(header.prefix(20))), "\(run.output)")
    }

    @Test("through the front a 2 MiB webhook written in full before reading gets a 413 problem, three times in a row")
    func oversizedWebhookThroughTheFront() throws {
        for attempt in 1...3 {
            let reply = try pythonRequest(port: front.tlsPort, method: "POST", path: "/v1/webhooks/web3", body: 2 << 20,
                                          headers: ["Content-Type": "application/json"])
            #expect(reply.status == 413 && reply.contentType == "application/problem+json"
                    && reply.body.contains("\"status\":413"), "attempt \(attempt): \(reply)")
        }
    }
}
