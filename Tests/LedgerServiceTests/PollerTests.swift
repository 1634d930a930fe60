import Foundation
import LedgerCore
import LedgerHTTP
import LedgerPostgres
import LedgerTestSupport
@testable import LedgerService
import Testing

/// A web3 gateway on loopback (real HTTP): answers queryOrder from a table, and
/// remembers who asked about what, with which key.
final class FakeGateway: @unchecked Sendable {
    let answers = Locked([String: HTTPResponse]())
    let asked = Locked([(order: String, key: String?)]())
    /// Seconds each answer waits (a slow gateway).
    let delay = Locked(0.0)
    private(set) var server: HTTPServer!
    private(set) var port = 0

    init() throws {
        var configuration = HTTPServerConfiguration()
        configuration.port = 0
        configuration.workerThreads = 4
        configuration.shutdownGraceSeconds = 1
        server = HTTPServer(configuration: configuration) { [self] request in
            guard request.method == "POST", request.path == "/api/pay/open/queryOrder",
                  let body = try? JSONValue.parse(request.body), let no = body["merchantOrderNo"]?.stringValue else {
                return .text(404, "not a queryOrder")
            }
            asked.with { $0.append((no, request.header("x-pay-api-key"))) }
            let wait = delay.with { $0 }
            if wait > 0 { Thread.sleep(forTimeInterval: wait) }
            return answers.with { $0[no] } ?? .json(200, Array(#"{"code":1001,"msg":"order not found"}"#.utf8))
        }
        port = try server.start()
    }

    var base: String { "http://127.0.0.1:\(port)" }
    func answer(_ no: String, status: Int, extra: String = "") {
        answers.with { $0[no] = .json(200, Array(#"{"code":0,"data":{"merchantOrderNo":"\#(no)","status":\#(status),"statusText":"s\#(status)","orderNo":"GW-\#(no)"\#(extra)}}"#.utf8)) }
    }
    func stop() { server.stop() }
}

@Suite("The web3 poller (ledger poll --once, ledger serve)")
final class PollerTests {
    let ledger: LedgerFixture
    let gateway: FakeGateway
    init() throws {
        ledger = try .start("poller")
        gateway = try FakeGateway()
    }
    deinit {
        gateway.stop()
        ledger.stop()
    }

    var env: [String: String] {
        ["DATABASE_URL": ledger.databaseURL, "LEDGER_WEB3_API_BASE": gateway.base,
         "LEDGER_WEB3_API_KEYS": "key-current,key-old"]
    }

    func pollOnce() -> (code: Int32, output: [String], errors: [String]) {
        let run = CLIRun()
        let code = run(["poll", "--once"], env: env)
        return (code, run.output, run.errorLines)
    }

    func schedule(_ no: String) throws -> (attempts: Int64, dueInSeconds: Double, error: String?)? {
        let r = try ledger.query("""
            SELECT attempts, extract(epoch FROM next_poll_at - now())::float8::text AS due, last_error
              FROM ledger.polls WHERE merchant_order_no = $1
            """, [.text(no)])
        guard r.count == 1 else { return nil }
        return (try r.int64(0, "attempts"), Double(try r.string(0, "due")) ?? .nan, try r.value(0, "last_error"))
    }

    /// The poller's schedule as `ledger poll` and `ledger serve` make it.
    static let plan = PollSchedule(statuses: OrderStatus.allCases.filter(PollPolicy.wantsPolling).map(\.rawValue),
                                   maxAgeSeconds: PollPolicy.maxAgeSeconds, restartDelaySeconds: PollPolicy.delaySeconds(afterAttempts: 1))

    @Test("a pass asks about every unpaid web3 order once, records each answer as a query event, and schedules the next poll")
    func pass() throws {
        for no in ["Q-1", "Q-2"] { #expect(try ledger.register(no).status == 201) }
        #expect(try ledger.client.post("/v1/orders", token: ledger.ingest,
                                       json: #"{"merchantOrderNo":"Q-BANXA","provider":"banxa","amount":"40","asset":"USDT"}"#).status == 201)
        #expect(try ledger.register("Q-PAID").status == 201)
        #expect(try ledger.sendWeb3(LedgerFixture.web3Body("Q-PAID", status: 3)).status == 200)
        gateway.answer("Q-1", status: 3, extra: #","txHash":"0xq1","amount":"40""#)
        gateway.answer("Q-2", status: 1)

        let first = pollOnce()
        #expect(first.code == 0, "\(first)")
        #expect(first.output == ["polled 2 order(s): 2 observation(s) recorded, 0 failed"], "\(first)")
        let asked = gateway.asked.with { $0 }
        #expect(asked.map(\.order).sorted() == ["Q-1", "Q-2"], "only web3 orders a poll can change: \(asked)")
        #expect(asked.allSatisfy { $0.key == "key-current" }, "the first configured key: \(asked)")

        let q1 = try ledger.order("Q-1")
        #expect(q1["status"]?.int64Value == 3 && q1["paid"]?.boolValue == true && q1["txHash"]?.stringValue == "0xq1", "\(q1)")
        let timeline = try ledger.client.get("/v1/orders/Q-1/events", token: ledger.auditor)
        let last = timeline["events"]?.arrayValue?.last
        #expect(last?["source"]?.stringValue == "query" && last?["verifiedBy"]?.stringValue == "poller", "\(String(describing: last))")
        #expect(try ledger.order("Q-2")["eventCount"]?.int64Value == 2, "a poll that still says 1 is an event too")
        let s2 = try #require(try schedule("Q-2"))
        #expect(s2.attempts == 1 && s2.dueInSeconds > 20 && s2.dueInSeconds <= 30, "\(s2)")

        let again = pollOnce()
        #expect(again.output == ["polled 0 order(s): 0 observation(s) recorded, 0 failed"], "nothing is due yet: \(again)")
        #expect(gateway.asked.with { $0.count } == 2)

        _ = try ledger.query("UPDATE ledger.polls SET next_poll_at = now() - interval '1 second' WHERE merchant_order_no = 'Q-2'")
        let later = pollOnce()
        #expect(later.output == ["polled 1 order(s): 1 observation(s) recorded, 0 failed"], "\(later)")
        let backedOff = try #require(try schedule("Q-2"))
        #expect(backedOff.attempts == 2 && backedOff.dueInSeconds > 50 && backedOff.dueInSeconds <= 60, "doubling: \(backedOff)")
        #expect(try ledger.verify() == [], "the read models still match a replay")
    }

    @Test("a pass claims only the orders due when it began: one due again meanwhile (a pass slower than its delay) waits for the next, so a pass ends")
    func passClaimsWhatWasDueWhenItBegan() throws {
        #expect(try ledger.register("B-1").status == 201)
        let c = try ledger.connect()
        defer { c.close() }
        let schedule = Self.plan
        let began = try schedule.enrol(sinceMicros: nil, on: c)
        // Polled in this pass and rescheduled to a moment after it began.
        try c.query("UPDATE ledger.polls SET next_poll_at = ledger.from_micros($1) + interval '1 millisecond' WHERE merchant_order_no = 'B-1'",
                    [.int(began)])
        #expect(try schedule.claim(10, dueByMicros: began, leaseSeconds: 130, on: c).isEmpty, "not again in the same pass")
        #expect(try schedule.claim(10, dueByMicros: began + 2_000, leaseSeconds: 130, on: c).map(\.0) == ["B-1"], "the next pass takes it")
    }

    @Test("the backoff starts again when the order's status changes: a webhook that moves it to confirming has it asked about within 30 s, not after a long backoff")
    func backoffRestartsOnAStatusChange() throws {
        #expect(try ledger.register("R-1").status == 201)
        #expect(try ledger.register("R-2").status == 201)
        gateway.answer("R-1", status: 1)
        gateway.answer("R-2", status: 1)
        #expect(pollOnce().code == 0)
        // Both far into their backoff: many answers that still said awaiting.
        _ = try ledger.query("UPDATE ledger.polls SET attempts = 6, next_poll_at = now() + interval '30 minutes'")
        // Signed a little after the poll's answer, so it is the newest observation (rule 2).
        #expect(try ledger.sendWeb3(LedgerFixture.web3Body("R-1", status: 2), timestamp: Timestamp.now().seconds + 2).status == 200)
        #expect(try ledger.order("R-1")["status"]?.int64Value == 2)

        let pass = pollOnce()
        #expect(pass.output == ["polled 0 order(s): 0 observation(s) recorded, 0 failed"], "\(pass)")
        let moved = try #require(try schedule("R-1"))
        #expect(moved.attempts == 0 && moved.dueInSeconds > 20 && moved.dueInSeconds <= 30, "restarted: \(moved)")
        let still = try #require(try schedule("R-2"))
        #expect(still.attempts == 6 && still.dueInSeconds > 1_700, "its status did not change: \(still)")

        // Another pass with nothing changed leaves both as they are.
        #expect(pollOnce().code == 0)
        let again = try #require(try schedule("R-1"))
        #expect(again.attempts == 0 && again.dueInSeconds <= moved.dueInSeconds, "\(again)")
        #expect(try #require(try schedule("R-2")).attempts == 6)
    }

    @Test("a restart while another poller holds the row leaves its lease alone, and that poller schedules it from the restart, not from the attempts it claimed")
    func restartWhileLeased() throws {
        #expect(try ledger.register("L-1").status == 201)
        let c = try ledger.connect()
        defer { c.close() }
        let plan = Self.plan
        _ = try plan.enrol(sinceMicros: nil, on: c)
        try c.query("UPDATE ledger.polls SET attempts = 6 WHERE merchant_order_no = 'L-1'")
        let claimed = try plan.claim(5, dueByMicros: try plan.now(on: c), leaseSeconds: 130, on: c)
        #expect(claimed.map(\.0) == ["L-1"] && claimed.first?.1 == 6)
        // While it is held, a webhook moves the order and another pass enrols.
        #expect(try ledger.sendWeb3(LedgerFixture.web3Body("L-1", status: 2), timestamp: Timestamp.now().seconds + 2).status == 200)
        _ = try plan.enrol(sinceMicros: nil, on: c)
        let held = try #require(try schedule("L-1"))
        #expect(held.attempts == 0 && held.dueInSeconds > 120, "restarted, its lease kept: \(held)")
        #expect(try plan.claim(5, dueByMicros: try plan.now(on: c) + 60_000_000, leaseSeconds: 130, on: c).isEmpty,
                "no other poller takes it within the next minute")
        // The holder's answer: scheduled from the restart (30 s), not from its 6 claimed attempts (30 minutes).
        try plan.reschedule("L-1", claimedAttempts: 6, afterSeconds: PollPolicy.delaySeconds(afterAttempts: 7), failure: nil, on: c)
        let after = try #require(try schedule("L-1"))
        #expect(after.attempts == 1 && after.dueInSeconds > 20 && after.dueInSeconds <= 30, "\(after)")
        // Without a restart the claimed attempts are what count.
        try c.query("UPDATE ledger.polls SET next_poll_at = now() - interval '1 second' WHERE merchant_order_no = 'L-1'")
        let again = try plan.claim(5, dueByMicros: try plan.now(on: c), leaseSeconds: 130, on: c)
        try plan.reschedule("L-1", claimedAttempts: again[0].1, afterSeconds: 60, failure: nil, on: c)
        let doubled = try #require(try schedule("L-1"))
        #expect(doubled.attempts == 2 && doubled.dueInSeconds > 50 && doubled.dueInSeconds <= 60, "\(doubled)")
    }

    @Test("a gateway that fails or answers a non-zero code gives no event: exit 1, the error kept on the schedule without the key")
    func failures() throws {
        for no in ["F-500", "F-CODE", "F-OK", "F-ECHO", "F-CUT"] { #expect(try ledger.register(no).status == 201) }
        gateway.answers.with { $0["F-500"] = .text(500, "upstream exploded") }
        gateway.answers.with { $0["F-ECHO"] = .json(401, Array(#"{"code":401,"msg":"invalid api key key-current"}"#.utf8)) }
        // The key echoed across the 200-byte cut of the error kept: no piece of it is kept.
        let padding = String(repeating: "x", count: 184)   // the key starts 7 bytes before the cut
        gateway.answers.with { $0["F-CUT"] = .json(401, Array(#"{"msg":"\#(padding) key-current"}"#.utf8)) }
        gateway.answer("F-OK", status: 2)
        let run = pollOnce()
        #expect(run.code == 1, "\(run)")
        #expect(run.output == ["polled 5 order(s): 1 observation(s) recorded, 4 failed"], "\(run)")
        let cut = try #require(try schedule("F-CUT"))
        #expect(cut.error?.contains("key-c") == false && cut.error?.contains("HTTP 401") == true, "\(cut)")
        let echoed = try #require(try schedule("F-ECHO"))
        #expect(echoed.error?.contains("HTTP 401") == true && echoed.error?.contains("[redacted]") == true, "\(echoed)")
        #expect(try ledger.order("F-500")["eventCount"]?.int64Value == 1 && ledger.order("F-CODE")["eventCount"]?.int64Value == 1)
        let e500 = try #require(try schedule("F-500")), eCode = try #require(try schedule("F-CODE"))
        #expect(e500.error?.contains("HTTP 500") == true && eCode.error?.contains("1001") == true, "\(e500) \(eCode)")
        #expect(e500.dueInSeconds > 20 && e500.attempts == 1, "retried like any poll: \(e500)")
        #expect(try ledger.count("SELECT count(*) AS n FROM ledger.polls WHERE last_error LIKE '%key-current%'") == 0)
        #expect(try ledger.order("F-OK")["status"]?.int64Value == 2)
    }

    @Test("poll needs --once; without LEDGER_WEB3_API_BASE polling is off (exit 2); a base without a key or not a URL is refused")
    func configuration() throws {
        let noOnce = CLIRun()
        #expect(noOnce(["poll"], env: env) == 64 && noOnce.errorLines.count == 1)
        let off = CLIRun()
        #expect(off(["poll", "--once"], env: ["DATABASE_URL": ledger.databaseURL]) == 2)
        #expect(off.errorLines.count == 1 && off.errorLines[0].contains("LEDGER_WEB3_API_BASE"), "\(off.errorLines)")
        let noKey = CLIRun()
        #expect(noKey(["poll", "--once"], env: ["DATABASE_URL": ledger.databaseURL, "LEDGER_WEB3_API_BASE": gateway.base]) == 2)
        #expect(noKey.errorLines.count == 1 && noKey.errorLines[0].contains("LEDGER_WEB3_API_KEYS"), "\(noKey.errorLines)")
        let clear = CLIRun()
        #expect(clear(["poll", "--once"], env: ["DATABASE_URL": ledger.databaseURL, "LEDGER_WEB3_API_BASE": "http://gateway.example",
                                                "LEDGER_WEB3_API_KEYS": "k"]) == 2, "the key would cross the network in clear")
        #expect(clear.errorLines.count == 1 && clear.errorLines[0].contains("https"), "\(clear.errorLines)")
        // A name that only looks like a loopback address is a host on the network like any other.
        let lookalike = CLIRun()
        #expect(lookalike(["poll", "--once"], env: ["DATABASE_URL": ledger.databaseURL, "LEDGER_WEB3_API_BASE": "http://127.attacker.example",
                                                    "LEDGER_WEB3_API_KEYS": "k"]) == 2, "\(lookalike.errorLines)")
        #expect(["127.0.0.1", "127.1.2.3", "localhost", "::1"].allSatisfy(Web3Gateway.isLoopback))
        #expect(!["127.attacker.example", "127.0.0.1.example", "128.0.0.1", "10.0.0.1", "0177.0.0.1"].contains(where: Web3Gateway.isLoopback))
        let notURL = CLIRun()
        #expect(notURL(["poll", "--once"], env: ["DATABASE_URL": ledger.databaseURL, "LEDGER_WEB3_API_BASE": "gateway.example",
                                                 "LEDGER_WEB3_API_KEYS": "k"]) == 2)
        #expect(notURL.errorLines.count == 1 && notURL.errorLines[0].contains("LEDGER_WEB3_API_BASE"), "\(notURL.errorLines)")
        // A base carrying a user and password is refused without quoting them.
        let userinfo = CLIRun()
        #expect(userinfo(["poll", "--once"], env: ["DATABASE_URL": ledger.databaseURL, "LEDGER_WEB3_API_BASE": "https://merchant:s3cr3t-pw@gateway.example",
                                                   "LEDGER_WEB3_API_KEYS": "k"]) == 2)
        #expect(userinfo.errorLines.count == 1 && !userinfo.errorLines[0].contains("s3cr3t-pw")
                && userinfo.errorLines[0].contains("LEDGER_WEB3_API_BASE"), "\(userinfo.errorLines)")
    }

    /// A real `ledger serve` on `db` with the poller on (this suite's gateway), and an ingest token.
    func servePolling(_ db: TestDatabase) throws -> (ServeProcess, String) {
        let c = try db.connect()
        let ingest = try TokenIssuer().create(role: .ingest, name: "backend", expiresAt: nil, on: c)
        c.close()
        let server = try ServeProcess(databaseURL: db.url, environment: ["LEDGER_WEB3_API_BASE": gateway.base])
        #expect(server.waitUntilServing(within: 20), "ledger serve did not come up: \(server.logText)")
        return (server, ingest)
    }

    @Test("ledger serve polls by itself: an order registered while it runs is found paid from the gateway's answer")
    func servePolls() throws {
        let db = try TestDatabase.create("pollserve")
        defer { LedgerFixture.drop(db) }
        let (server, ingest) = try servePolling(db)
        defer { _ = server.signal(SIGTERM) }
        gateway.answer("SP-1", status: 4, extra: #","amount":"40""#)
        let client = HTTPClient(port: server.port)
        #expect(try client.post("/v1/orders", token: ingest,
                                json: #"{"merchantOrderNo":"SP-1","provider":"web3","amount":"40","asset":"USDT"}"#).status == 201)
        let paid = eventually(within: 15, every: 0.25) {
            try client.get("/v1/orders/SP-1", token: ingest)["status"]?.int64Value == 4
        }
        #expect(paid, "the poller did not record the gateway's answer within 15 s: \(server.logText.suffix(1500))")
    }

    @Test("ledger poll --once asks about every due order, however many claims that takes, and forgets orders no poll can change")
    func everyDueOrder() throws {
        for i in 0..<12 {
            #expect(try ledger.register("M-\(i)").status == 201)
            gateway.answer("M-\(i)", status: i < 6 ? 3 : 1)
        }
        let run = pollOnce()
        #expect(run.output == ["polled 12 order(s): 12 observation(s) recorded, 0 failed"], "\(run)")
        #expect(Set(gateway.asked.with { $0.map(\.order) }).count == 12)
        _ = try ledger.query("UPDATE ledger.polls SET next_poll_at = now() - interval '1 second'")
        let next = pollOnce()
        #expect(next.output == ["polled 6 order(s): 6 observation(s) recorded, 0 failed"], "the paid ones are not asked again: \(next)")
        #expect(try ledger.count("SELECT count(*) AS n FROM ledger.polls") == 6, "the paid orders' schedule rows are gone")
    }

    @Test("SIGTERM while the poller waits on a slow gateway: ledger serve stops in time, exit 0")
    func stopDuringAPass() throws {
        let db = try TestDatabase.create("pollstop")
        defer { LedgerFixture.drop(db) }
        gateway.delay.with { $0 = 3 }
        let (server, ingest) = try servePolling(db)
        let client = HTTPClient(port: server.port)
        for i in 0..<6 {
            #expect(try client.post("/v1/orders", token: ingest,
                                    json: #"{"merchantOrderNo":"ST-\#(i)","provider":"web3","amount":"40","asset":"USDT"}"#).status == 201)
        }
        #expect(eventually(within: 15) { gateway.asked.with { $0.contains { $0.order.hasPrefix("ST-") } } }, "the poller never asked")
        let started = Date()
        let status = server.signal(SIGTERM, waitSeconds: 30)
        let took = Date().timeIntervalSince(started)
        #expect(status == 0, "exit \(String(describing: status)); log: \(server.logText.suffix(1500))")
        #expect(took < 10, "the stop waited \(took) s: it should end with the order being asked about (3 s), not the 6 due")
    }
}
