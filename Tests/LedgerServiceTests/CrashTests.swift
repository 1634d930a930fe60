import Foundation
import LedgerCore
import LedgerPostgres
import LedgerTestSupport
import Synchronization
import Testing
#if canImport(Glibc)
import Glibc
#endif

@Suite("The ledger serve process")
struct CrashTests {
    @Test("kill -9 in the middle of a webhook load loses no acknowledged event; a restarted server answers their redeliveries as duplicates")
    func killDuringLoad() throws {
        let db = try TestDatabase.create("kill")
        defer { LedgerFixture.drop(db) }
        let server = try ServeProcess(databaseURL: db.url)
        #expect(server.waitUntilServing(within: 20), "ledger serve did not come up: \(server.logText)")

        let load = WebhookLoad(port: server.port, threads: 4, prefix: "KILL", orders: 8, timeout: 10)
        // Kill once the load is well under way, while requests are in flight.
        load.waitForAcknowledged(300, within: 20)
        let status = server.signal(SIGKILL)
        let ackedAtKill = load.acknowledged.count
        load.stop()
        #expect(status.map { $0 & 0x7f } == SIGKILL, "the server died of SIGKILL (wait status \(status.map(String.init) ?? "none"))")
        #expect(ackedAtKill >= 300, "the load never got going: \(ackedAtKill) acknowledged; log: \(server.logText)")
        let acked = load.acknowledged
        try expectEveryAcknowledgedStoredOnce(acked, databaseURL: db.url, after: "the crash")

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
        let load = WebhookLoad(port: server.port, threads: 4, prefix: "TL", orders: 8, timeout: 30)
        load.waitForAcknowledged(200, within: 20)
        let status = server.signal(SIGTERM, waitSeconds: 30)
        load.stop()
        #expect(status != nil, "ledger serve did not exit within 30 s of SIGTERM")
        if let status { #expect(status == 0, "exit status \(status); log: \(server.logText.suffix(2000))") }
        let answered = load.statuses.filter { $0.key != 0 && $0.key != 200 }
        #expect(answered.keys.allSatisfy { $0 == 503 }, "statuses other than 200: \(answered)")
        try expectEveryAcknowledgedStoredOnce(load.acknowledged, databaseURL: db.url, after: "SIGTERM")
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
