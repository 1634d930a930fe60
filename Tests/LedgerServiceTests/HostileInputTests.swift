import Foundation
import LedgerCore
import LedgerHTTP
import LedgerTestSupport
import Testing

/// Inputs written to confuse a parser or exhaust a server: each gets a clean
/// 4xx problem, stores nothing, and leaves the service answering.
@Suite("Hostile bodies, order numbers and connections")
final class HostileInputTests {
    let ledger: LedgerFixture
    init() throws {
        ledger = try .start("hostile", keepDatabase: true) {
            $0.idleTimeoutSeconds = 1
            $0.perIPConnectionLimit = 6
        }
    }
    deinit { ledger.stop() }

    @Test("a signed webhook repeating a key (two statuses) is 400: no parser gets to pick which one counts")
    func duplicateKeys() throws {
        let body = Array(#"{"merchantOrderNo":"HI-1","status":5,"status":3}"#.utf8)
        let reply = try ledger.sendWeb3(body)
        #expect(reply.status == 400 && reply.isProblem, "\(reply)")
        #expect(try ledger.count("SELECT count(*) AS n FROM ledger.events") == 0)
    }

    @Test("deeply nested JSON, a NUL character and an absurd exponent are 400 and the service keeps answering")
    func parserBombs() throws {
        let deep = String(repeating: "[", count: 100_000) + String(repeating: "]", count: 100_000)
        let nested = try ledger.client.post("/v1/orders", token: ledger.ingest,
                                            json: #"{"merchantOrderNo":"HI-2","provider":"web3","amount":"1","asset":"USDT","providerResponse":\#(deep)}"#)
        #expect(nested.status == 400 && nested.isProblem, "\(nested)")
        let nul = try ledger.client.post("/v1/orders", token: ledger.ingest,
                                         json: #"{"merchantOrderNo":"HI-2","provider":"web3","amount":"1","asset":"US\u0000DT"}"#)
        #expect(nul.status == 400 && nul.isProblem, "\(nul)")
        let exponent = try ledger.sendWeb3(Array(#"{"merchantOrderNo":"HI-2","status":3,"amount":1e999999999}"#.utf8))
        #expect(exponent.status == 400 && exponent.isProblem, "\(exponent)")
        let longAmount = try ledger.client.post("/v1/orders", token: ledger.ingest,
                                                json: #"{"merchantOrderNo":"HI-2","provider":"web3","amount":"1\#(String(repeating: "0", count: 5000))","asset":"USDT"}"#)
        #expect(longAmount.status == 400 && longAmount.isProblem, "\(longAmount)")
        #expect(try ledger.client.get("/healthz").status == 200)
        #expect(try ledger.count("SELECT count(*) AS n FROM ledger.events") == 0)
    }

    @Test("the deepest payload a request may carry is stored, and the order takes later events: the stored state nests it deeper")
    func deepestAcceptedPayload() throws {
        #expect(try ledger.register("HI-DEEP").status == 201)
        // The body's object is level 1: a payload 63 levels deep is the most a request may carry.
        let payload = String(repeating: "[", count: 63) + String(repeating: "]", count: 63)
        let relay = try ledger.client.post("/v1/orders/HI-DEEP/client-events", token: ledger.ingest, json: """
            {"provider":"acme","callback":"close","payload":\(payload),"clientEventId":"9b7c2a4e-3f1d-4c8a-9e2b-5d6f7a8b9c0d"}
            """)
        #expect(relay.status == 201, "\(relay)")
        // A signed payment for the order must still be recorded (its state is loaded, folded and saved).
        let paid = try ledger.sendWeb3(LedgerFixture.web3Body("HI-DEEP", status: 3))
        #expect(paid.status == 200, "\(paid)")
        let order = try ledger.order("HI-DEEP")
        // (The document nests the payload deeper than a request may: read it as text.)
        #expect(order.status == 200 && order.text.contains(#""status":3,"statusName":"paid","paid":true"#), "\(order)")
        let timeline = try ledger.client.get("/v1/orders/HI-DEEP/events", token: ledger.support)
        #expect(timeline.status == 200, "\(timeline)")
    }

    @Test("an order number using every allowed character works on every order route; 65 characters or a foreign character is 400")
    func orderNumberAlphabet() throws {
        let no = "Shop.2026:11_A-z09"
        #expect(try ledger.register(no).status == 201)
        #expect(try ledger.sendWeb3(LedgerFixture.web3Body(no, status: 2)).status == 200)
        #expect(try ledger.order(no)["status"]?.int64Value == 2)
        #expect(try ledger.client.get("/v1/orders/\(no)/events", token: ledger.support)["events"]?.arrayValue?.count == 2)
        let minted = try ledger.client.post("/v1/orders/\(no)/client-tokens", token: ledger.ingest, json: "{}")
        #expect(minted.status == 201, "\(minted)")
        #expect(try ledger.client.get("/v1/orders?q=\(no)", token: ledger.support)["orders"]?.arrayValue?.count == 1)

        let longest = String(repeating: "n", count: 64)
        #expect(try ledger.register(longest).status == 201)
        #expect(try ledger.order(longest).status == 200)
        let tooLong = try ledger.register(longest + "n")
        #expect(tooLong.status == 400 && tooLong.isProblem, "\(tooLong)")
        #expect(try ledger.order(longest + "n").status == 400)
        let foreign = try ledger.register("Ä-1")
        #expect(foreign.status == 400 && foreign.isProblem, "\(foreign)")
        #expect(try ledger.order("A%2F1").status == 400, "an encoded slash is not part of an order number")
    }

    @Test("a connection that goes silent mid-request is closed by the idle timeout")
    func idleTimeout() throws {
        let connection = try TestConnection(port: ledger.port, timeout: 10)
        try connection.send("POST /v1/webhooks/web3 HTTP/1.1\r\nHost: t\r\nContent-Length: 100\r\n\r\n{\"merch")
        let started = Date()
        let (_, closed) = connection.readUntilClosed(within: 8)
        #expect(closed, "a slow sender holds its connection forever")
        #expect(Date().timeIntervalSince(started) < 6, "closed only after \(Date().timeIntervalSince(started)) s with a 1 s idle timeout")
    }

    @Test("connections beyond the total limit are turned away, and service resumes when they close")
    func totalConnectionLimit() throws {
        let small = try LedgerFixture.start("connlimit") {
            $0.connectionLimit = 4
            $0.perIPConnectionLimit = 0
        }
        defer { small.stop() }
        var held: [TestConnection] = []
        for _ in 0..<4 {
            let c = try TestConnection(port: small.port, timeout: 5)
            try c.send("GET /healthz HTTP/1.1\r\nHost: t\r\n\r\n")
            #expect(try c.readResponse().status == 200)
            held.append(c)
        }
        var servedBeyondLimit = false
        if let extra = try? TestConnection(port: small.port, timeout: 1) {
            try? extra.send("GET /healthz HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n")
            if let reply = try? extra.readResponse(), reply.status == 200 { servedBeyondLimit = true }
        }
        #expect(!servedBeyondLimit, "a fifth connection was served with a limit of 4")
        held.removeAll()
        #expect(eventually(within: 5) { try small.client.get("/healthz").status == 200 })
    }

    @Test("connections beyond the per-IP limit are turned away, and service resumes when they close")
    func perIPLimit() throws {
        var held: [TestConnection] = []
        for _ in 0..<6 {
            let c = try TestConnection(port: ledger.port, timeout: 5)
            try c.send("GET /healthz HTTP/1.1\r\nHost: t\r\n\r\n")
            #expect(try c.readResponse().status == 200)
            held.append(c)
        }
        var servedBeyondLimit = false
        if let extra = try? TestConnection(port: ledger.port, timeout: 1) {
            try? extra.send("GET /healthz HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n")
            if let reply = try? extra.readResponse(), reply.status == 200 { servedBeyondLimit = true }
        }
        #expect(!servedBeyondLimit, "a seventh connection from one address was served with a per-IP limit of 6")
        held.removeAll()
        #expect(eventually(within: 5) { try ledger.client.get("/healthz").status == 200 })
    }
}
