import Foundation
import LedgerCore
import LedgerPostgres
@testable import LedgerService
import LedgerTestSupport
import Testing

/// Whatever a write route accepts, every read path reads back: seeded hostile JSON
/// (HostileJSON) goes through every write route over real HTTP, then the order, its
/// timeline and `asOf`, the list, `ledger replay`, `ledger verify`, `ledger rebuild`,
/// both exports (CLI and HTTP) and a poller pass must all succeed on the result.
/// Each refusal is a 400 problem naming the field. The database is kept for Ops/test,
/// which verifies it again after the whole suite.
@Suite("Hostile JSON through every write route reads back on every read path")
final class HostileReadBackTests {
    static let bodiesPerRoute = 5_000
    static let orders = 200
    static let enrollments = 50
    static let threads = 8

    let ledger: LedgerFixture
    let gateway: FakeGateway
    let folder: URL
    init() throws {
        ledger = try .start("hostile_readback", poolSize: 8, keepDatabase: true)
        gateway = try FakeGateway()
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("ledger-hostile-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    }
    deinit {
        gateway.stop()
        ledger.stop()
        try? FileManager.default.removeItem(at: folder)
    }

    /// One write route: how to build body `n` (seeded), where to send it, and which
    /// field a refusal must name (nil: every body must be accepted).
    struct Route: Sendable {
        var name: String
        var refusalNames: String?
        var send: @Sendable (_ n: Int, _ generator: inout HostileJSON) throws -> Reply
    }

    /// What one route's run saw.
    struct Tally: Sendable {
        var accepted = 0
        var refused = 0
        var failures: [String] = []
    }

    static func orderNo(_ n: Int) -> String { "HX-\(n % orders)" }

    static func uuid(_ n: Int, _ route: Int) -> String {
        String(format: "%08x-0000-4000-8000-%012x", route, n)
    }

    func routes(clientTokens: Locked<[String: String]>) -> [Route] {
        let ledger = self.ledger
        return [
            Route(name: "POST /v1/orders", refusalNames: "providerResponse") { n, g in
                try ledger.client.post("/v1/orders", token: ledger.ingest, json: """
                    {"merchantOrderNo":"HR-\(n)","provider":"acme","amount":"40","asset":"USDT","providerResponse":\(g.value(depth: JSONParser.maxDepth - 1))}
                    """)
            },
            Route(name: "POST /v1/orders/{no}/observations", refusalNames: "response") { n, g in
                let status = n % 6 + 1
                let members = ([#""status":\#(status)"#] + g.members(n % 4, depth: JSONParser.maxDepth - 2)).joined(separator: ",")
                return try ledger.client.post("/v1/orders/\(Self.orderNo(n))/observations", token: ledger.ingest, json: """
                    {"provider":"acme","response":{\(members)}}
                    """)
            },
            Route(name: "POST /v1/orders/{no}/client-tokens", refusalNames: "extra") { n, g in
                let reply = try ledger.client.post("/v1/orders/\(Self.orderNo(n))/client-tokens", token: ledger.ingest,
                                                   json: "{" + g.members(n % 3, depth: 3).joined(separator: ",") + "}")
                if reply.status == 201, let token = reply["token"]?.stringValue {
                    clientTokens.with { if $0[Self.orderNo(n)] == nil { $0[Self.orderNo(n)] = token } }
                }
                return reply
            },
            Route(name: "POST /v1/orders/{no}/client-events", refusalNames: "payload") { n, g in
                // Half relayed by the app with the order's client token, as the issue's attacker did.
                let token = n % 2 == 0 ? clientTokens.with { $0[Self.orderNo(n)] } ?? ledger.ingest : ledger.ingest
                return try ledger.client.post("/v1/orders/\(Self.orderNo(n))/client-events", token: token, json: """
                    {"provider":"web3","callback":"close","payload":\(g.value(depth: JSONParser.maxDepth - 1)),"clientEventId":"\(Self.uuid(n, 4))"}
                    """)
            },
            Route(name: "POST /v1/enrollments/{ref}/client-events", refusalNames: "payload") { n, g in
                let members = ([#""type":"close""#] + g.members(n % 4, depth: JSONParser.maxDepth - 2)).joined(separator: ",")
                return try ledger.client.post("/v1/enrollments/HE-\(n % Self.enrollments)/client-events", token: ledger.ingest, json: """
                    {"provider":"bankpay","callback":"close","payload":{\(members)},"clientEventId":"\(Self.uuid(n, 5))"}
                    """)
            },
            Route(name: "POST /v1/orders/{no}/corrections", refusalNames: "reason") { n, g in
                try ledger.client.post("/v1/orders/\(Self.orderNo(n))/corrections", token: ledger.auditor, json: """
                    {"status":\(n % 6 + 1),"reason":\(g.string())}
                    """, headers: [("Idempotency-Key", "hostile-\(n)")])
            },
            // Signed provider deliveries: whatever their unmapped fields hold, each is stored.
            Route(name: "POST /v1/webhooks/web3", refusalNames: nil) { n, g in
                var fields = [#""merchantOrderNo":"\#(Self.orderNo(n))""#, #""status":\#(n % 6 + 1)"#, #""orderNo":"GW-\#(n)""#]
                fields += g.members(1 + n % 3, depth: JSONParser.maxDepth + 1)
                return try ledger.sendWeb3(Array(("{" + fields.joined(separator: ",") + "}").utf8))
            },
            Route(name: "POST /v1/webhooks/banxa", refusalNames: nil) { n, g in
                let status = ["pendingPayment", "waitingPayment", "paymentReceived", "complete", "expired", "extraVerification"][n % 6]
                var fields = [#""external_id":"\#(Self.orderNo(n))""#, #""status":"\#(status)""#, #""order_id":"BX-\#(n)""#]
                fields += g.members(1 + n % 3, depth: JSONParser.maxDepth + 1)
                let body = Array(("{" + fields.joined(separator: ",") + "}").utf8)
                let nonce = String(Timestamp.now().microseconds / 1_000)
                let signature = BanxaWebhook.signature(secret: LedgerFixture.banxaSecret, nonce: nonce, body: body)
                return try ledger.client.post("/v1/webhooks/banxa", body: body,
                                              headers: [("Authorization", "Bearer \(LedgerFixture.banxaAPIKey):\(signature):\(nonce)")])
            },
        ]
    }

    /// Sends `bodiesPerRoute` bodies on `threads` threads and tallies the answers.
    func run(_ route: Route, index: Int) -> Tally {
        let tally = Locked(Tally())
        onThreads(Self.threads) { thread in
            var generator = HostileJSON(seed: 0x5EED_0000 + UInt64(index * 64 + thread), refusable: true)
            var n = thread
            while n < Self.bodiesPerRoute {
                defer { n += Self.threads }
                do {
                    let reply = try route.send(n, &generator)
                    let problemNames = reply.isProblem && (reply["detail"]?.stringValue?.contains(route.refusalNames ?? "\u{0}") ?? false)
                    if (200...201).contains(reply.status) {
                        tally.with { $0.accepted += 1 }
                    } else if reply.status == 400 && route.refusalNames != nil && problemNames {
                        tally.with { $0.refused += 1 }
                    } else if reply.status == 413, route.name.hasSuffix("/client-events"), reply.isProblem,
                              reply["detail"]?.stringValue?.contains("at most \(Ingestion.relayMaxBytes) bytes") == true {
                        // A relayed callback over its own limit, said so.
                        tally.with { $0.refused += 1 }
                    } else {
                        tally.with { $0.failures.append("body \(n): \(reply)") }
                    }
                } catch {
                    tally.with { $0.failures.append("body \(n): \(error)") }
                }
            }
        }
        return tally.snapshot
    }

    /// A response body as JSON, read with the depth a stored payload may have.
    static func json(_ reply: Reply) -> JSONValue? { try? JSONParser.parse(reply.body, maxDepth: JSONParser.storedMaxDepth) }

    @Test("5,000 seeded hostile bodies per write route: each is stored or refused with a 400 naming its field, and every read path reads back")
    func everyWriteRouteEveryReadPath() throws {
        for n in 0..<Self.orders { #expect(try ledger.register("HX-\(n)").status == 201) }
        let clientTokens = Locked([String: String]())
        let started = Timestamp.now()
        var midpoint = started
        let clock = ContinuousClock()
        var phase = clock.now
        func lap(_ what: String) {
            print("HostileReadBackTests: \(what) took \(clock.now - phase)")
            phase = clock.now
        }
        for (index, route) in routes(clientTokens: clientTokens).enumerated() {
            let tally = run(route, index: index)
            lap("\(route.name) (\(tally.accepted) stored, \(tally.refused) refused)")
            for failure in tally.failures.prefix(5) { Issue.record("\(route.name): \(failure.prefix(1_500))") }
            #expect(tally.failures.isEmpty, "\(route.name): \(tally.failures.count) answers were neither stored nor a clear refusal")
            #expect(tally.accepted + tally.refused == Self.bodiesPerRoute)
            // Most bodies are stored, so the read paths below see hostile content.
            #expect(tally.accepted > Self.bodiesPerRoute / 2, "\(route.name): only \(tally.accepted) accepted, \(tally.refused) refused")
            if index == 3 { midpoint = Timestamp.now() }
        }
        let ended = Timestamp(microseconds: Timestamp.now().microseconds + 1_000_000)

        // The HTTP read paths, for every order: its state, the timeline (support masked,
        // auditor with raw bodies), the state as of the middle of the run.
        let numbers = try ledger.query("SELECT merchant_order_no FROM ledger.orders ORDER BY 1")
        let orders = try (0..<numbers.count).map { try numbers.string($0, "merchant_order_no") }
        #expect(orders.count >= Self.orders + Self.bodiesPerRoute / 2)
        let readFailures = Locked([String]())
        let ledger = self.ledger
        let asOf = midpoint.rfc3339.replacingOccurrences(of: ":", with: "%3A")
        onThreads(Self.threads) { thread in
            for k in stride(from: thread, to: orders.count, by: Self.threads) {
                let no = orders[k]
                for (target, token) in [("/v1/orders/\(no)", ledger.support), ("/v1/orders/\(no)/events", ledger.support),
                                        ("/v1/orders/\(no)/events", ledger.auditor), ("/v1/orders/\(no)?asOf=\(asOf)", ledger.auditor)] {
                    do {
                        let reply = try ledger.client.get(target, token: token)
                        let fine = reply.status == 200 || (reply.status == 404 && target.contains("asOf"))
                        if !fine || Self.json(reply) == nil { readFailures.with { $0.append("\(target): \(reply)") } }
                    } catch {
                        readFailures.with { $0.append("\(target): \(error)") }
                    }
                }
            }
        }
        lap("reading \(orders.count) orders, their timelines and asOf")
        for failure in readFailures.snapshot.prefix(5) { Issue.record("read: \(failure.prefix(1_500))") }
        #expect(readFailures.snapshot.isEmpty, "\(readFailures.snapshot.count) reads failed")

        // The list, page by page, to the end.
        var cursor: String? = nil
        var listed = 0
        repeat {
            let reply = try ledger.client.get("/v1/orders?limit=500" + (cursor.map { "&cursor=\($0)" } ?? ""), token: ledger.support)
            guard reply.status == 200, let page = Self.json(reply) else { Issue.record("list: \(reply)"); break }
            listed += page["orders"]?.arrayValue?.count ?? 0
            cursor = page["nextCursor"]?.stringValue
        } while cursor != nil
        #expect(listed == orders.count)

        // The CLI's read paths: replay (as a table and as JSON), verify, rebuild, verify again.
        let env = ["DATABASE_URL": ledger.databaseURL]
        for no in orders.prefix(40) + orders.suffix(20) {
            for arguments in [["replay", "--order", no], ["replay", "--order", no, "--json"]] {
                let run = CLIRun()
                #expect(run(arguments, env: env) == 0, "\(arguments): \(run.errorLines)")
            }
        }
        for command in ["verify", "rebuild", "verify"] {
            let run = CLIRun()
            #expect(run([command], env: env) == 0, "ledger \(command): \(run.errorLines.prefix(5))")
        }

        lap("the list, replay, verify, rebuild")
        // Both exports, both formats: the CLI's file and the HTTP body are the same bytes.
        for kind in ["events", "orders"] {
            for format in ["csv", "jsonl"] {
                let path = folder.appendingPathComponent("\(kind).\(format)").path
                let run = CLIRun()
                let code = run(["export", kind, "--from", started.rfc3339, "--to", ended.rfc3339, "--format", format, "--out", path], env: env)
                #expect(code == 0, "ledger export \(kind) \(format): \(run.errorLines)")
                let file = (try? [UInt8](Data(contentsOf: URL(fileURLWithPath: path)))) ?? []
                let query = "from=\(started.rfc3339)&to=\(ended.rfc3339)&format=\(format)".replacingOccurrences(of: ":", with: "%3A")
                let reply = try ledger.client.get("/v1/exports/\(kind)?\(query)", token: ledger.accountant)
                #expect(reply.status == 200, "GET /v1/exports/\(kind) \(format): \(reply)")
                #expect(reply.body == file && !file.isEmpty, "GET /v1/exports/\(kind) \(format) differs from ledger export")
            }
        }

        lap("the exports")
        // A poller pass over unpaid web3 orders that hold hostile content (a client event's
        // payload, a webhook's unmapped fields), the gateway answering with hostile fields too.
        var hostile = HostileJSON(seed: 0x9011, refusable: false)
        for n in 0..<50 {
            let no = "HP-\(n)"
            #expect(try ledger.register(no).status == 201)
            let relay = try ledger.client.post("/v1/orders/\(no)/client-events", token: ledger.ingest, json: """
                {"provider":"web3","callback":"close","payload":\(hostile.value(depth: JSONParser.maxDepth - 1)),"clientEventId":"\(Self.uuid(n, 9))"}
                """)
            #expect(relay.status == 201, "\(relay)")
            let webhook = "{" + ([#""merchantOrderNo":"\#(no)","status":2"#] + hostile.members(2, depth: JSONParser.maxDepth - 1)).joined(separator: ",") + "}"
            #expect(try ledger.sendWeb3(Array(webhook.utf8)).status == 200)
            let extra = hostile.members(2, depth: JSONParser.maxDepth - 1).joined(separator: ",")
            gateway.answers.with {
                $0[no] = .json(200, Array(#"{"code":0,"data":{"merchantOrderNo":"\#(no)","status":2,"orderNo":"GW-\#(no)"},\#(extra)}"#.utf8))
            }
        }
        for n in 0..<Self.orders {
            gateway.answers.with {
                $0["HX-\(n)"] = .json(200, Array(#"{"code":0,"data":{"merchantOrderNo":"HX-\#(n)","status":2,"orderNo":"GW-HX-\#(n)"}}"#.utf8))
            }
        }
        let poll = CLIRun()
        let pollCode = poll(["poll", "--once"], env: env.merging(["LEDGER_WEB3_API_BASE": gateway.base, "LEDGER_WEB3_API_KEYS": "k"]) { a, _ in a })
        #expect(pollCode == 0, "ledger poll --once: \(poll.errorLines.prefix(5))")
        #expect(Set(gateway.asked.snapshot.map(\.order)).isSuperset(of: (0..<50).map { "HP-\($0)" }), "the poller missed orders")
        #expect(poll.output.last?.hasSuffix(", 0 failed") == true, "\(poll.output)")
        lap("a poller pass")
        #expect(try ledger.verify() == [])
    }
}
