import Foundation
import LedgerCore
import LedgerPostgres
import LedgerTestSupport
import Synchronization
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// The real `ledger serve` as a child process. Spawned with posix_spawn and
/// reaped with waitpid (Foundation's Process can hang off the main thread).
final class ServeProcess: @unchecked Sendable {
    // @unchecked: `pid` is immutable; `reaped` is only touched by the test's thread.
    let pid: pid_t
    let port: Int
    let log: String
    private var exitStatus: Int32?

    /// The `ledger` executable of this build: beside the test bundle, else the package's .build/debug.
    static func executable() throws -> String {
        var candidates: [String] = []
        if let exe = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe") {
            candidates.append(URL(fileURLWithPath: exe).deletingLastPathComponent().appendingPathComponent("ledger").path)
        }
        candidates.append(URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("ledger").path)
        var root = URL(fileURLWithPath: #filePath)
        while root.path != "/" && !FileManager.default.fileExists(atPath: root.appendingPathComponent("Package.swift").path) {
            root.deleteLastPathComponent()
        }
        candidates.append(root.appendingPathComponent(".build/debug/ledger").path)
        guard let found = candidates.first(where: { FileManager.default.isExecutableFile(atPath: $0) }) else {
            throw ClientError.io("no ledger executable in \(candidates): build the `ledger` product first")
        }
        return found
    }

    static func freePort() throws -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) } }
        guard bound == 0 else { throw ClientError.io("bind: errno \(errno)") }
        _ = withUnsafeMutablePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) } }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    init(databaseURL: String, environment extra: [String: String] = [:]) throws {
        port = try Self.freePort()
        log = NSTemporaryDirectory() + "ledger-serve-\(port).log"
        var environment = LedgerFixture.environment(databaseURL: databaseURL).merging(extra) { $1 }
        environment["LEDGER_LISTEN"] = "127.0.0.1:\(port)"
        environment["LEDGER_MIGRATIONS"] = TestDatabase.migrationsDirectory
        environment["PATH"] = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        let binary = try Self.executable()
        pid = try spawnLogged([binary, "serve"], environment: environment, log: log)
    }

    var logText: String { (try? String(contentsOfFile: log, encoding: .utf8)) ?? "" }

    /// True once /healthz answers 200; false if the child exits or `seconds` pass.
    func waitUntilServing(within seconds: Double) -> Bool {
        eventually(within: seconds, every: 0.05) {
            if hasExited { return false }
            return try HTTPClient(port: port, receiveTimeout: 2).get("/healthz").status == 200
        }
    }

    var hasExited: Bool {
        if exitStatus != nil { return true }
        var status: Int32 = 0
        if waitpid(pid, &status, WNOHANG) == pid { exitStatus = status; return true }
        return false
    }

    /// Sends `signal` and reaps the child; the wait status, or nil if it outlived `seconds`.
    @discardableResult
    func signal(_ signal: Int32, waitSeconds seconds: Double = 30) -> Int32? {
        if let exitStatus { return exitStatus }
        kill(pid, signal)
        let deadline = Date(timeIntervalSinceNow: seconds)
        while Date() < deadline {
            var status: Int32 = 0
            let r = waitpid(pid, &status, WNOHANG)
            if r == pid { exitStatus = status; return status }
            if r < 0 && errno != EINTR { return nil }
            usleep(20_000)
        }
        return nil
    }

    deinit {
        if !hasExited {
            kill(pid, SIGKILL)
            var status: Int32 = 0
            while waitpid(pid, &status, 0) == -1 && errno == EINTR {}
        }
        try? FileManager.default.removeItem(atPath: log)
    }
}

@Suite("The ledger serve process")
struct CrashTests {
    @Test("kill -9 in the middle of a webhook load loses no acknowledged event; a restarted server answers their redeliveries as duplicates")
    func killDuringLoad() throws {
        let db = try TestDatabase.create("kill")
        defer { LedgerFixture.drop(db) }
        let server = try ServeProcess(databaseURL: db.url)
        #expect(server.waitUntilServing(within: 20), "ledger serve did not come up: \(server.logText)")

        let acknowledged = Locked([[UInt8]]())
        let stop = Atomic<Bool>(false)
        let group = DispatchGroup()
        let port = server.port
        for t in 0..<4 {
            group.enter()
            let thread = Thread {
                defer { group.leave() }
                let client = HTTPClient(port: port, receiveTimeout: 10)
                var i = 0
                while !stop.load(ordering: .relaxed) && i < 5_000 {
                    let body = LedgerFixture.web3Body("KILL-\(t)-\(i % 8)", status: [1, 2, 5, 3, 4][i % 5], extra: #","seq":"\#(t)-\#(i)""#)
                    i += 1
                    let ts = String(Timestamp.now().seconds)
                    guard let reply = try? client.post("/v1/webhooks/web3", body: body,
                                                       headers: LedgerFixture.web3Headers(body, timestamp: ts)) else {
                        usleep(5_000)
                        continue
                    }
                    if reply.status == 200 { acknowledged.with { $0.append(body) } }
                }
            }
            thread.start()
        }
        // Kill once the load is well under way, while requests are in flight.
        _ = eventually(within: 20, every: 0.01) { acknowledged.with { $0.count } >= 300 }
        let status = server.signal(SIGKILL)
        let ackedAtKill = acknowledged.with { $0.count }
        stop.store(true, ordering: .relaxed)
        group.wait()
        #expect(status.map { $0 & 0x7f } == SIGKILL, "the server died of SIGKILL (wait status \(status.map(String.init) ?? "none"))")
        #expect(ackedAtKill >= 300, "the load never got going: \(ackedAtKill) acknowledged; log: \(server.logText)")

        let acked = acknowledged.snapshot
        let c = try db.connect()
        defer { c.close() }
        var missing = 0
        for body in acked {
            let n = try c.query("SELECT count(*) AS n FROM ledger.events WHERE idempotency_key = $1",
                                [.text(LedgerFixture.web3Key(body))]).int64(0, "n")
            if n != 1 { missing += 1 }
        }
        #expect(missing == 0, "\(missing) of \(acked.count) acknowledged webhooks are not stored exactly once")
        let total = try c.query("SELECT count(*) AS n FROM ledger.events").int64(0, "n")
        #expect(total >= Int64(acked.count))
        #expect(try ChainVerifier().verify(on: c) == .intact(events: total, head: total), "the chain survives the crash")
        #expect(try LedgerFixture.verify(databaseURL: db.url) == [], "read models match a replay after the crash")

        // A restarted server recognises the acknowledged ones as redeliveries.
        let restarted = try ServeProcess(databaseURL: db.url)
        #expect(restarted.waitUntilServing(within: 20), "ledger serve did not come back: \(restarted.logText)")
        let sample = try #require(acked.last)
        let again = try HTTPClient(port: restarted.port).post("/v1/webhooks/web3", body: sample,
                                                              headers: LedgerFixture.web3Headers(sample, timestamp: String(Timestamp.now().seconds)))
        #expect(again.status == 200, "\(again)")
        #expect(again["duplicate"]?.boolValue == true, "\(again)")
        restarted.signal(SIGKILL)
    }

    @Test("SIGTERM in the middle of a webhook load: ledger serve exits 0, answers only 200 or 503, and every 200 is stored")
    func sigtermDuringLoad() throws {
        let db = try TestDatabase.create("termload")
        defer { LedgerFixture.drop(db) }
        let server = try ServeProcess(databaseURL: db.url)
        #expect(server.waitUntilServing(within: 20), "ledger serve did not come up: \(server.logText)")
        let acknowledged = Locked([[UInt8]]())
        let otherStatuses = Locked([Int]())
        let stop = Atomic<Bool>(false)
        let group = DispatchGroup()
        let port = server.port
        for t in 0..<4 {
            group.enter()
            Thread {
                defer { group.leave() }
                let client = HTTPClient(port: port, receiveTimeout: 30)
                var i = 0
                while !stop.load(ordering: .relaxed) && i < 5_000 {
                    let body = LedgerFixture.web3Body("TL-\(t)-\(i % 8)", status: [1, 2, 5, 3, 4][i % 5], extra: #","seq":"\#(t)-\#(i)""#)
                    i += 1
                    let ts = String(Timestamp.now().seconds)
                    guard let reply = try? client.post("/v1/webhooks/web3", body: body,
                                                       headers: LedgerFixture.web3Headers(body, timestamp: ts)) else {
                        usleep(5_000)
                        continue
                    }
                    if reply.status == 200 { acknowledged.with { $0.append(body) } } else { otherStatuses.with { $0.append(reply.status) } }
                }
            }.start()
        }
        _ = eventually(within: 20, every: 0.01) { acknowledged.with { $0.count } >= 200 }
        let status = server.signal(SIGTERM, waitSeconds: 30)
        stop.store(true, ordering: .relaxed)
        group.wait()
        #expect(status != nil, "ledger serve did not exit within 30 s of SIGTERM")
        if let status { #expect(status == 0, "exit status \(status); log: \(server.logText.suffix(2000))") }
        #expect(otherStatuses.snapshot.allSatisfy { $0 == 503 }, "statuses other than 200: \(otherStatuses.snapshot)")

        let c = try db.connect()
        defer { c.close() }
        var notOnce = 0
        for body in acknowledged.snapshot {
            let n = try c.query("SELECT count(*) AS n FROM ledger.events WHERE idempotency_key = $1",
                                [.text(LedgerFixture.web3Key(body))]).int64(0, "n")
            if n != 1 { notOnce += 1 }
        }
        #expect(notOnce == 0, "\(notOnce) of \(acknowledged.snapshot.count) acknowledged webhooks are not stored exactly once")
    }

    @Test("every thread of ledger serve blocks SIGTERM and SIGINT, so the signal waits for the one sigwait instead of landing on a thread that drops it")
    func shutdownSignalsBlockedInEveryThread() throws {
        let db = try TestDatabase.create("sigmask")
        defer { LedgerFixture.drop(db) }
        let server = try ServeProcess(databaseURL: db.url)
        defer { server.signal(SIGKILL) }
        #expect(server.waitUntilServing(within: 20), "ledger serve did not come up: \(server.logText)")
        let body = LedgerFixture.web3Body("SIGMASK-1", status: 2)   // a webhook: the writer and handlers have run
        let reply = try HTTPClient(port: server.port).post("/v1/webhooks/web3", body: body,
                                                           headers: LedgerFixture.web3Headers(body, timestamp: String(Timestamp.now().seconds)))
        #expect(reply.status == 200, "\(reply)")
        let tasks = try FileManager.default.contentsOfDirectory(atPath: "/proc/\(server.pid)/task")
        let wanted: UInt64 = (1 << (UInt64(SIGTERM) - 1)) | (1 << (UInt64(SIGINT) - 1))
        var unblocked: [String] = []
        var checked = 0
        // The main thread is the one in sigwait, which unblocks the signals it waits for while it waits.
        for task in tasks where task != String(server.pid) {
            guard let status = try? String(contentsOfFile: "/proc/\(server.pid)/task/\(task)/status", encoding: .utf8),
                  let line = status.split(separator: "\n").first(where: { $0.hasPrefix("SigBlk:") }),
                  let mask = UInt64(line.dropFirst("SigBlk:".count).trimmingCharacters(in: .whitespaces), radix: 16) else { continue }
            checked += 1
            if mask & wanted != wanted {
                let name = (try? String(contentsOfFile: "/proc/\(server.pid)/task/\(task)/comm", encoding: .utf8)) ?? "?"
                unblocked.append("\(task) \(name.trimmingCharacters(in: .whitespacesAndNewlines))")
            }
        }
        #expect(checked > 10, "only \(checked) of \(tasks.count) threads' masks were read: not the server this test means")
        #expect(unblocked.isEmpty, "threads that would take SIGTERM themselves: \(unblocked)")
    }

    @Test("ledger serve runs on jemalloc, which glibc's allocator is no substitute for under its cross-thread frees")
    func allocatesThroughJemalloc() throws {
        let db = try TestDatabase.create("jemalloc")
        defer { LedgerFixture.drop(db) }
        let server = try ServeProcess(databaseURL: db.url)
        defer { server.signal(SIGKILL) }
        #expect(server.waitUntilServing(within: 20), "ledger serve did not come up: \(server.logText)")
        // Read to the end: procfs reports a size of 0, and a one-shot read stops after a page.
        let file = try #require(FileHandle(forReadingAtPath: "/proc/\(server.pid)/maps"))
        defer { try? file.close() }
        let maps = String(decoding: file.readDataToEndOfFile(), as: UTF8.self)
        #expect(maps.contains("libjemalloc.so"), "libjemalloc is not mapped: the executable was linked without it")
    }

    @Test("SIGTERM stops ledger serve gracefully: it exits 0 and stops listening")
    func sigterm() throws {
        let db = try TestDatabase.create("term")
        defer { LedgerFixture.drop(db) }
        let server = try ServeProcess(databaseURL: db.url)
        #expect(server.waitUntilServing(within: 20), "ledger serve did not come up: \(server.logText)")
        let body = LedgerFixture.web3Body("TERM-1", status: 3)
        let reply = try HTTPClient(port: server.port).post("/v1/webhooks/web3", body: body,
                                                           headers: LedgerFixture.web3Headers(body, timestamp: String(Timestamp.now().seconds)))
        #expect(reply.status == 200, "\(reply)")
        let status = server.signal(SIGTERM, waitSeconds: 30)
        #expect(status != nil, "ledger serve did not exit within 30 s of SIGTERM")
        if let status {
            #expect(status & 0x7f == 0 && (status >> 8) & 0xff == 0, "exit status \(status); log: \(server.logText)")
        }
        #expect(throws: (any Error).self, "nothing listens after the shutdown") { try HTTPClient(port: server.port).get("/healthz") }
    }
}
