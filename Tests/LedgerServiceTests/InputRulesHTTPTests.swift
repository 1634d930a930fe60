import Foundation
import LedgerCore
import LedgerPostgres
@testable import LedgerService
import LedgerTestSupport
import Testing

/// Issue 18, item 6, against the real service: inputs http-api.md refuses get a 400
/// problem naming the field and store nothing; client events keep every field the app
/// sent, masked for support and whole for auditors, and read back on every path.
@Suite("Input rules of the ledger's own API, over HTTP")
final class InputRulesHTTPTests {
    let ledger: LedgerFixture
    init() throws { ledger = try .start("hostile_inputs", keepDatabase: true) }
    deinit { ledger.stop() }

    static let uuid = "4c7c2a4e-3f1d-4c8a-9e2b-5d6f7a8b9c0d"

    func events() throws -> Int64 { try ledger.count("SELECT count(*) AS n FROM ledger.events") }

    /// A 400 problem whose detail names `field`.
    func expectRefused(_ reply: Reply, naming field: String, _ what: String, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(reply.status == 400 && reply.isProblem, "\(what): \(reply)", sourceLocation: sourceLocation)
        #expect(reply["detail"]?.stringValue?.contains(field) == true, "\(what): the detail must name \(field): \(reply)",
                sourceLocation: sourceLocation)
    }

    func registration(_ fields: [(String, String)]) -> String {
        let base: [(String, String)] = [("merchantOrderNo", #""IR-1""#), ("provider", #""web3""#), ("amount", #""40""#), ("asset", #""USDT""#)]
        var merged = base.filter { b in !fields.contains { $0.0 == b.0 } }
        merged += fields
        return "{" + merged.map { "\"\($0.0)\":\($0.1)" }.joined(separator: ",") + "}"
    }

    // MARK: order numbers

    @Test("an order number of . or .. is refused: 400 naming merchantOrderNo on registration, and 400 on every order and enrollment route by path")
    func dotSegmentOrderNumbersRefused() throws {
        for no in [".", ".."] {
            let reply = try ledger.client.post("/v1/orders", token: ledger.ingest, json: registration([("merchantOrderNo", "\"\(no)\"")]))
            expectRefused(reply, naming: "merchantOrderNo", "registering \(no)")
            #expect(reply["detail"]?.stringValue?.contains("dot segment") == true, "\(reply)")
            // Sent raw (this client normalises nothing), as a hand-written request could.
            let observation = #"{"provider":"acme","response":{"status":3}}"#
            let relay = #"{"provider":"banxa","callback":"banxaDidDismiss","clientEventId":"\#(Self.uuid)"}"#
            let paths: [(String, String, String?, String)] = [
                ("POST", "/v1/orders/\(no)/observations", ledger.ingest, observation),
                ("POST", "/v1/orders/\(no)/client-events", ledger.ingest, relay),
                ("POST", "/v1/orders/\(no)/client-tokens", ledger.ingest, "{}"),
                ("POST", "/v1/orders/\(no)/corrections", ledger.auditor, #"{"status":5,"reason":"test"}"#),
                ("GET", "/v1/orders/\(no)", ledger.support, ""),
                ("GET", "/v1/orders/\(no)/events", ledger.support, ""),
                ("POST", "/v1/enrollments/\(no)/client-tokens", ledger.ingest, "{}"),
                ("POST", "/v1/enrollments/\(no)/client-events", ledger.ingest,
                 #"{"provider":"bankpay","callback":"close","payload":{"type":"close"},"clientEventId":"\#(Self.uuid)"}"#),
            ]
            for (method, path, token, body) in paths {
                let r = try ledger.client.send(method, path, headers: [("Authorization", "Bearer " + token!), ("Content-Type", "application/json")],
                                               body: Array(body.utf8))
                #expect(r.status == 400 && r.isProblem, "\(method) \(path): \(r)")
            }
        }
        #expect(try events() == 0)
        // Dots elsewhere are fine.
        #expect(try ledger.register("...").status == 201)
        #expect(try ledger.register(".a").status == 201)
        #expect(try ledger.order("...").status == 200)
    }

    @Test("an order number given as a JSON number is 400 naming merchantOrderNo: 1000 and 1000.0 are never two orders")
    func numericOrderNumberRefused() throws {
        for literal in ["1000", "1000.0", "1.5"] {
            let reply = try ledger.client.post("/v1/orders", token: ledger.ingest, json: registration([("merchantOrderNo", literal)]))
            expectRefused(reply, naming: "merchantOrderNo", literal)
        }
        #expect(try events() == 0)
        let asString = try ledger.client.post("/v1/orders", token: ledger.ingest, json: registration([("merchantOrderNo", #""1000""#)]))
        #expect(asString.status == 201, "\(asString)")
    }

    // MARK: text fields

    @Test("every text field of the write routes given as a JSON number is 400 naming the field, and nothing is stored")
    func numericTextFieldsRefused() throws {
        #expect(try ledger.register("IR-T").status == 201)
        let before = try events()
        for field in ["provider", "amount", "asset", "chainId", "tokenId", "fiatCurrency", "fiatAmount", "externalCustomerId", "providerOrderId"] {
            let reply = try ledger.client.post("/v1/orders", token: ledger.ingest, json: registration([("merchantOrderNo", #""IR-N""#), (field, "56")]))
            expectRefused(reply, naming: field, "registration \(field): 56")
        }
        for (field, body) in [("provider", #"{"provider":7,"response":{"status":3}}"#),
                              ("observedAt", #"{"provider":"acme","response":{"status":3},"observedAt":1764417600}"#)] {
            let reply = try ledger.client.post("/v1/orders/IR-T/observations", token: ledger.ingest, json: body)
            expectRefused(reply, naming: field, "observation \(field)")
        }
        let relay: [(String, String)] = [("provider", #""banxa""#), ("callback", #""banxaDidDismiss""#), ("clientEventId", "\"\(Self.uuid)\""),
                                         ("occurredAt", #""2025-11-29T12:00:00Z""#), ("sdkVersion", #""1.0.0""#)]
        for field in relay.map(\.0) {
            let body = "{" + relay.map { "\"\($0.0)\":\($0.0 == field ? "2" : $0.1)" }.joined(separator: ",") + "}"
            let reply = try ledger.client.post("/v1/orders/IR-T/client-events", token: ledger.ingest, json: body)
            expectRefused(reply, naming: field, "client event \(field)")
            let enrollmentBody = body.replacingOccurrences(of: #""banxa""#, with: #""bankpay""#)
                .replacingOccurrences(of: #""banxaDidDismiss""#, with: #""close""#)
            let enrollment = try ledger.client.post("/v1/enrollments/ENR-T/client-events", token: ledger.ingest, json: enrollmentBody)
            expectRefused(enrollment, naming: field, "enrollment event \(field)")
        }
        let correction = try ledger.client.post("/v1/orders/IR-T/corrections", token: ledger.auditor, json: #"{"status":5,"reason":5}"#)
        expectRefused(correction, naming: "reason", "correction reason")
        #expect(try events() == before)
    }

    @Test("an empty string for a field the spec names is 400 naming it, not absent: observedAt, occurredAt, sdkVersion, chainId, reason")
    func emptyStringsRefused() throws {
        #expect(try ledger.register("IR-E").status == 201)
        let before = try events()
        let observed = try ledger.client.post("/v1/orders/IR-E/observations", token: ledger.ingest,
                                              json: #"{"provider":"acme","response":{"status":2},"observedAt":""}"#)
        expectRefused(observed, naming: "observedAt", "observedAt \"\"")
        for field in ["occurredAt", "sdkVersion"] {
            let reply = try ledger.client.post("/v1/orders/IR-E/client-events", token: ledger.ingest,
                                               json: #"{"provider":"banxa","callback":"banxaDidDismiss","clientEventId":"\#(Self.uuid)","\#(field)":""}"#)
            expectRefused(reply, naming: field, "\(field) \"\"")
        }
        for field in ["chainId", "tokenId", "fiatCurrency", "fiatAmount", "externalCustomerId", "providerOrderId", "asset"] {
            let reply = try ledger.client.post("/v1/orders", token: ledger.ingest, json: registration([("merchantOrderNo", #""IR-E2""#), (field, #""""#)]))
            expectRefused(reply, naming: field, "registration \(field) \"\"")
        }
        let reason = try ledger.client.post("/v1/orders/IR-E/corrections", token: ledger.auditor, json: #"{"status":5,"reason":""}"#)
        expectRefused(reason, naming: "reason", "reason \"\"")
        #expect(try events() == before)
        // Left out (or null), an optional field is absent as before.
        let absent = try ledger.client.post("/v1/orders/IR-E/observations", token: ledger.ingest,
                                            json: #"{"provider":"acme","response":{"status":2},"observedAt":null}"#)
        #expect(absent.status == 201, "\(absent)")
    }

    @Test("a time whose offset carries it before year 0000 or past 9999 is 400 naming the field: it would be stored and never read back")
    func timesOutOfFourDigitYears() throws {
        #expect(try ledger.register("IR-Y").status == 201)
        let before = try events()
        for time in ["0000-01-01T00:00:00+00:01", "9999-12-31T23:59:59-00:01"] {
            let relay = try ledger.client.post("/v1/orders/IR-Y/client-events", token: ledger.ingest,
                                               json: #"{"provider":"banxa","callback":"banxaDidDismiss","clientEventId":"\#(Self.uuid)","occurredAt":"\#(time)"}"#)
            expectRefused(relay, naming: "occurredAt", "occurredAt \(time)")
            let observed = try ledger.client.post("/v1/orders/IR-Y/observations", token: ledger.ingest,
                                                  json: #"{"provider":"acme","response":{"status":2},"observedAt":"\#(time)"}"#)
            expectRefused(observed, naming: "observedAt", "observedAt \(time)")
        }
        #expect(try events() == before)
        #expect(try ledger.client.get("/v1/orders/IR-Y/events", token: ledger.auditor).status == 200)
    }

    @Test("amounts given as JSON numbers are 400 naming amount or fiatAmount; the same amounts as decimal strings register")
    func numericAmountsRefused() throws {
        let amount = try ledger.client.post("/v1/orders", token: ledger.ingest, json: registration([("merchantOrderNo", #""IR-A""#), ("amount", "40.5")]))
        expectRefused(amount, naming: "amount", "amount 40.5")
        #expect(amount["detail"]?.stringValue?.contains("decimal string") == true, "\(amount)")
        let fiat = try ledger.client.post("/v1/orders", token: ledger.ingest,
                                          json: registration([("merchantOrderNo", #""IR-A""#), ("fiatCurrency", #""EUR""#), ("fiatAmount", "37")]))
        expectRefused(fiat, naming: "fiatAmount", "fiatAmount 37")
        #expect(try events() == 0)
        let strings = try ledger.client.post("/v1/orders", token: ledger.ingest,
                                             json: registration([("merchantOrderNo", #""IR-A""#), ("amount", #""40.5""#), ("fiatCurrency", #""EUR""#), ("fiatAmount", #""37""#)]))
        #expect(strings.status == 201 && strings["expectedAmount"]?.stringValue == "40.5", "\(strings)")
    }

    @Test("providers' own formats still carry numbers: a web3 webhook naming its order as a number, and a query response with numeric ids")
    func providerNumbersStillAccepted() throws {
        let body = Array(#"{"merchantOrderNo":7001,"orderNo":99,"status":2,"amount":40,"chainId":56,"tokenId":1}"#.utf8)
        let webhook = try ledger.sendWeb3(body)
        #expect(webhook.status == 200, "\(webhook)")
        let order = try ledger.order("7001")
        #expect(order.status == 200 && order["providerOrderId"]?.stringValue == "99", "\(order)")
        let query = try ledger.client.post("/v1/orders/7001/observations", token: ledger.ingest,
                                           json: #"{"provider":"web3","response":{"code":0,"status":3,"merchantOrderNo":7001,"orderNo":99,"amount":40}}"#)
        #expect(query.status == 201, "\(query)")
        #expect(try ledger.order("7001")["paid"]?.boolValue == true)
    }

    // MARK: client events keep every field

    static let failPayload = #"{"error":"serverError","code":502,"localizedDescription":"The server returned 502 for jane.doe@example.com","email":"jane.doe@example.com","attempt":3}"#

    func relay(_ no: String, _ provider: String, _ callback: String, _ payload: String, id: String) throws -> Reply {
        try ledger.client.post("/v1/orders/\(no)/client-events", token: ledger.ingest, json: """
            {"provider":"\(provider)","callback":"\(callback)","payload":\(payload),"clientEventId":"\(id)","occurredAt":"2025-11-29T12:00:00Z"}
            """)
    }

    func storedPayload(_ key: String) throws -> JSONValue {
        let row = try ledger.query("SELECT payload::text AS p FROM ledger.events WHERE idempotency_key = $1", [.text(key)])
        #expect(row.count == 1)
        return try JSONValue.parse(try row.string(0, "p"))["payload"] ?? .null
    }

    @Test("a relay stored by an earlier version with a smaller payload is a duplicate when sent again with the same bytes; other bytes under its id are 409")
    func relayStoredSmallerIsStillADuplicate() throws {
        #expect(try ledger.register("IR-U").status == 201)
        let id = "8d7c2a4e-3f1d-4c8a-9e2b-5d6f7a8b9c0d"
        let body = """
            {"provider":"banxa","callback":"banxaDidFail","payload":\(Self.failPayload),"clientEventId":"\(id)","occurredAt":"2025-11-29T12:00:00Z"}
            """
        // As an earlier version stored it: the same raw bytes, the payload cut to the APIError case.
        let no = try MerchantOrderNo("IR-U")
        let occurred = Timestamp.parse("2025-11-29T12:00:00Z")!
        let older = LedgerEvent.clientSignal(ClientSignal(
            merchantOrderNo: no, provider: "banxa", callback: "banxaDidFail",
            payload: try JSONValue.parse(#"{"error":"serverError","code":502}"#), clientEventId: id,
            occurredAt: occurred, receivedAt: occurred))
        let pool = ConnectionPool(configuration: DatabaseConfiguration(connectionString: ledger.databaseURL, poolSize: 1))
        let committer = GroupCommitter(pool: pool, projector: OrderProjection())
        _ = try committer.append([EventMapping.newEvent(older, raw: Array(body.utf8), receipt: Receipt(requestID: "test", verifiedBy: "token:test"))],
                                 attachments: [older])
        committer.shutdown()
        pool.close()

        let again = try ledger.client.post("/v1/orders/IR-U/client-events", token: ledger.ingest, json: body)
        #expect(again.status == 200 && again["duplicate"]?.boolValue == true, "\(again)")
        let other = try relay("IR-U", "banxa", "banxaDidFail", #"{"error":"unauthorized"}"#, id: id)
        #expect(other.status == 409 && other.isProblem, "\(other)")
        #expect(try ledger.count("SELECT count(*) AS n FROM ledger.events WHERE stream = 'order-IR-U'") == 2)
    }

    @Test("a banxaDidFail with localizedDescription and an email keeps both in the stored payload; support sees the email masked, auditors see it")
    func banxaDidFailKeepsExtraFields() throws {
        #expect(try ledger.register("IR-F").status == 201)
        let id = "5c7c2a4e-3f1d-4c8a-9e2b-5d6f7a8b9c01"
        let reply = try relay("IR-F", "banxa", "banxaDidFail", Self.failPayload, id: id)
        #expect(reply.status == 201, "\(reply)")
        let stored = try storedPayload("client:order-IR-F:" + id)
        #expect(stored["error"]?.stringValue == "serverError" && stored["code"]?.int64Value == 502, "\(stored)")
        #expect(stored["localizedDescription"]?.stringValue == "The server returned 502 for jane.doe@example.com", "\(stored)")
        #expect(stored["email"]?.stringValue == "jane.doe@example.com" && stored["attempt"]?.int64Value == 3, "\(stored)")

        let support = try ledger.client.get("/v1/orders/IR-F/events", token: ledger.support)
        let supportPayload = support["events"]?.arrayValue?.last?["payload"]?["payload"]
        #expect(supportPayload?["email"]?.stringValue == "j***@example.com", "\(support)")
        #expect(supportPayload?["localizedDescription"]?.stringValue == "The server returned 502 for j***@example.com")
        #expect(!support.text.contains("jane.doe@example.com"), "support's timeline shows no address: \(support.text)")
        let auditor = try ledger.client.get("/v1/orders/IR-F/events", token: ledger.auditor)
        #expect(auditor["events"]?.arrayValue?.last?["payload"]?["payload"]?["email"]?.stringValue == "jane.doe@example.com", "\(auditor)")

        // The order's last client signal, as support, ingest and auditors read it.
        for (token, masked) in [(ledger.support, true), (ledger.ingest, true), (ledger.auditor, false)] {
            let order = try ledger.order("IR-F", token: token)
            let email = order["lastClientSignal"]?["payload"]?["email"]?.stringValue
            #expect(email == (masked ? "j***@example.com" : "jane.doe@example.com"), "\(order)")
            #expect(order["lastClientSignal"]?["payload"]?["localizedDescription"] != nil, "\(order)")
        }
        let list = try ledger.client.get("/v1/orders?q=IR-F", token: ledger.support)
        #expect(list.status == 200 && !list.text.contains("jane.doe@example.com") && list.text.contains("j***@example.com"), "\(list)")
        // The same relay again is a duplicate of the stored event, not a key conflict.
        let again = try relay("IR-F", "banxa", "banxaDidFail", Self.failPayload, id: id)
        #expect(again.status == 200 && again["duplicate"]?.boolValue == true, "\(again)")
        // The APIError case is still checked with extra fields beside it.
        let wrong = try relay("IR-F", "banxa", "banxaDidFail", #"{"error":"serverError","email":"jane.doe@example.com"}"#,
                              id: "5c7c2a4e-3f1d-4c8a-9e2b-5d6f7a8b9c02")
        #expect(wrong.status == 400 && wrong.isProblem, "\(wrong)")
    }

    @Test("checkout results, dismissals, BankPay dictionaries and other providers' callbacks keep the fields the app added")
    func otherCallbacksKeepExtraFields() throws {
        #expect(try ledger.register("IR-O").status == 201)
        let cases: [(String, String, String, String)] = [
            ("banxa", "banxaDidCompleteCheckout", #"{"paymentId":"pay_1","orderId":"8f3b","status":"succeeded","email":"ann@example.org","screen":"checkout"}"#, "screen"),
            ("banxa", "banxaDidDismiss", #"{"reason":"swiped down","email":"ann@example.org"}"#, "reason"),
            ("bankpay", "acceptedTransactionIntentServiceFee", #"{"type":"acceptedTransactionIntentServiceFee","data":{"transactionIntentId":"ti_1","fee":"1.50"},"email":"ann@example.org","note":"n"}"#, "note"),
            ("bankpay", "error", #"{"error":"declined","message":"Insufficient funds","errors":{"account":"closed"},"email":"ann@example.org","requestId":"rq-1"}"#, "requestId"),
            ("acme", "close", #"{"email":"ann@example.org","anything":[1,2,{"x":null}]}"#, "anything"),
        ]
        for (i, (provider, callback, payload, extra)) in cases.enumerated() {
            let id = "6c7c2a4e-3f1d-4c8a-9e2b-5d6f7a8b9c0\(i)"
            let reply = try relay("IR-O", provider, callback, payload, id: id)
            #expect(reply.status == 201, "\(callback): \(reply)")
            let stored = try storedPayload("client:order-IR-O:" + id)
            // (jsonb orders keys its own way: compare in its form.)
            #expect(JSONBText.normalized(stored) == JSONBText.normalized(try JSONValue.parse(payload)),
                    "\(callback): the stored payload is what the app sent: \(stored)")
            #expect(stored[extra] != nil && stored["email"]?.stringValue == "ann@example.org")
        }
        let support = try ledger.client.get("/v1/orders/IR-O/events", token: ledger.support)
        #expect(support.status == 200 && !support.text.contains("ann@example.org") && support.text.contains("a***@example.org"), "\(support)")
        #expect(try ledger.client.get("/v1/orders/IR-O/events", token: ledger.auditor).text.contains("ann@example.org"))

        // An enrollment's callback keeps them too.
        let enrollment = try ledger.client.post("/v1/enrollments/ENR-O/client-events", token: ledger.ingest, json: """
            {"provider":"bankpay","callback":"bankAccountAdded","payload":{"type":"bankAccountAdded","data":{"intent_id":"ei_1","last4":"6789"},"email":"ann@example.org"},"clientEventId":"\(Self.uuid)"}
            """)
        #expect(enrollment.status == 201, "\(enrollment)")
        let stored = try storedPayload("client:enrollment-ENR-O:" + Self.uuid)
        #expect(stored["email"]?.stringValue == "ann@example.org" && stored["data"]?["last4"]?.stringValue == "6789", "\(stored)")
    }

    @Test("an extra member jsonb cannot store (a number beyond its range) is a 4xx problem, stores nothing, and the service goes on")
    func unstorableExtraMemberRefused() throws {
        #expect(try ledger.register("IR-J").status == 201)
        let before = try events()
        for (provider, callback, payload) in [("banxa", "banxaDidFail", #"{"error":"invalidURL","n":1e200000}"#),
                                              ("acme", "close", #"{"n":1e200000}"#)] {
            let reply = try relay("IR-J", provider, callback, payload, id: "8c7c2a4e-3f1d-4c8a-9e2b-5d6f7a8b9c01")
            #expect((400..<500).contains(reply.status) && reply.isProblem, "\(callback): \(reply)")
        }
        #expect(try events() == before)
        #expect(try relay("IR-J", "banxa", "banxaDidFail", #"{"error":"invalidURL","n":1e50}"#, id: "8c7c2a4e-3f1d-4c8a-9e2b-5d6f7a8b9c02").status == 201)
    }

    @Test("client events with extra fields read back through ledger verify, rebuild, replay and the exports")
    func extraFieldsReadBackEverywhere() throws {
        let from = Timestamp.now()
        Thread.sleep(forTimeInterval: 0.02)
        #expect(try ledger.register("IR-R").status == 201)
        #expect(try relay("IR-R", "banxa", "banxaDidFail", Self.failPayload, id: "7c7c2a4e-3f1d-4c8a-9e2b-5d6f7a8b9c01").status == 201)
        #expect(try relay("IR-R", "banxa", "banxaDidDismiss", #"{"reason":"later","n":1.50}"#, id: "7c7c2a4e-3f1d-4c8a-9e2b-5d6f7a8b9c02").status == 201)
        #expect(try relay("IR-R", "bankpay", "close", #"{"type":"close","email":"ann@example.org"}"#, id: "7c7c2a4e-3f1d-4c8a-9e2b-5d6f7a8b9c03").status == 201)
        #expect(try ledger.client.post("/v1/enrollments/ENR-R/client-events", token: ledger.ingest, json: """
            {"provider":"bankpay","callback":"close","payload":{"type":"close","email":"ann@example.org"},"clientEventId":"\(Self.uuid)"}
            """).status == 201)
        // Paid, so the orders export (orders first paid in the period) has its row.
        #expect(try ledger.sendWeb3(LedgerFixture.web3Body("IR-R", status: 3)).status == 200)
        let before = try ledger.order("IR-R", token: ledger.auditor)
        #expect(try ledger.verify() == [], "verify after live projection")

        let env = ["DATABASE_URL": ledger.databaseURL]
        let rebuild = CLIRun()
        #expect(rebuild(["rebuild"], env: env) == 0, "\(rebuild.errorLines)")
        #expect(try ledger.verify() == [], "verify after rebuild")
        let after = try ledger.order("IR-R", token: ledger.auditor)
        #expect(after.json?.removing(["updatedAt"]) == before.json?.removing(["updatedAt"]), "rebuild gives the same order: \(after)")

        let replay = CLIRun()
        #expect(replay(["replay", "--order", "IR-R", "--json"], env: env) == 0, "\(replay.errorLines)")
        #expect(replay.output.contains { $0.contains("localizedDescription") }, "\(replay.output)")
        // Each event's line carries the whole state after it; the last one's is the final state.
        let lines = try replay.output.map { try JSONValue.parse($0) }
        let events = lines.dropLast()
        #expect(!events.isEmpty && events.allSatisfy { $0["stateAfter"]?["status"] == $0["statusAfter"] }, "\(replay.output)")
        #expect(events.last?["stateAfter"] == lines.last, "\(replay.output)")

        Thread.sleep(forTimeInterval: 0.02)
        let to = Timestamp.now()
        for kind in ["events", "orders"] {
            let reply = try ledger.client.get("/v1/exports/\(kind)?from=\(ExportTests.q(from.rfc3339))&to=\(ExportTests.q(to.rfc3339))&format=jsonl",
                                              token: ledger.accountant)
            #expect(reply.status == 200 && reply.text.contains("IR-R"), "\(kind): \(reply)")
        }
    }

    @Test("an order registered as . before the rule still rebuilds, verifies, replays, lists and exports")
    func legacyDotOrderReadsBack() throws {
        let from = Timestamp.now()
        Thread.sleep(forTimeInterval: 0.02)
        // Stored as the ledger stored it before: through the writer and its projection.
        let no = try MerchantOrderNo(stored: ".")
        let now = Timestamp.now()
        let registered = LedgerEvent.registered(OrderRegistration(merchantOrderNo: no, provider: "web3", amount: "40", asset: "USDT", registeredAt: now))
        let signal = LedgerEvent.clientSignal(ClientSignal(
            merchantOrderNo: no, provider: "banxa", callback: "banxaDidFail", payload: try JSONValue.parse(Self.failPayload),
            clientEventId: Self.uuid, occurredAt: now, receivedAt: now))
        let pool = ConnectionPool(configuration: DatabaseConfiguration(connectionString: ledger.databaseURL, poolSize: 1))
        let committer = GroupCommitter(pool: pool, projector: OrderProjection())
        let receipt = Receipt(requestID: "test", verifiedBy: "token:test")
        _ = try committer.append([EventMapping.newEvent(registered, raw: nil, receipt: receipt)], attachments: [registered])
        _ = try committer.append([EventMapping.newEvent(signal, raw: nil, receipt: receipt)], attachments: [signal])
        let paid = LedgerEvent.observed(StatusObservation(merchantOrderNo: no, provider: "web3", source: .webhook, status: .paid,
                                                          observedAt: now, amount: "40", idempotencyKey: "web3:legacy-dot-order"))
        // As a signed webhook is kept: its raw body and the signature headers it came with.
        let body = Array(#"{"merchantOrderNo":".","status":3,"amount":"40"}"#.utf8)
        let ts = String(now.seconds)
        let signedWith: JSONValue = .object([("X-Pay-Timestamp", .string(ts)),
                                             ("X-Pay-Signature", .string(Web3Webhook.signature(key: LedgerFixture.web3Keys[0], timestamp: ts, body: body)))])
        _ = try committer.append([EventMapping.newEvent(paid, raw: body, receipt: Receipt(requestID: "test", verifiedBy: "signature", signedWith: signedWith))],
                                 attachments: [paid])
        committer.shutdown()
        pool.close()

        #expect(try ledger.verify() == [])
        let env = ["DATABASE_URL": ledger.databaseURL]
        let rebuild = CLIRun()
        #expect(rebuild(["rebuild"], env: env) == 0, "\(rebuild.errorLines)")
        #expect(try ledger.verify() == [])
        let replay = CLIRun()
        #expect(replay(["replay", "--order", "."], env: env) == 0, "\(replay.errorLines)")
        #expect(replay.output.count == 9, "the header, a blank line and three events: \(replay.output)")
        #expect(replay.output[0] == "order     ." && replay.output[8].contains("→ 3 paid"), "\(replay.output)")
        let list = try ledger.client.get("/v1/orders?q=.", token: ledger.support)
        #expect(list["orders"]?.arrayValue?.first?["merchantOrderNo"]?.stringValue == ".", "\(list)")
        #expect(!list.text.contains("jane.doe@example.com"))
        Thread.sleep(forTimeInterval: 0.02)
        let to = Timestamp.now()
        for kind in ["events", "orders"] {
            let reply = try ledger.client.get("/v1/exports/\(kind)?from=\(ExportTests.q(from.rfc3339))&to=\(ExportTests.q(to.rfc3339))&format=csv",
                                              token: ledger.accountant)
            #expect(reply.status == 200 && reply.text.contains(kind == "events" ? "order-.,.,StatusObserved" : ".,web3,"), "\(kind): \(reply)")
        }
        // The ledger's API refuses it for anything new; its provider's signed webhooks are still recorded.
        let more = try ledger.client.post("/v1/orders", token: ledger.ingest, json: registration([("merchantOrderNo", #"".""#)]))
        #expect(more.status == 400)
        let webhook = try ledger.sendWeb3(LedgerFixture.web3Body(".", status: 4))
        #expect(webhook.status == 200, "\(webhook)")
        let completed = try ledger.client.get("/v1/orders?q=.", token: ledger.support)
        #expect(completed["orders"]?.arrayValue?.first?["status"]?.int64Value == 4, "\(completed)")
        #expect(try ledger.verify() == [])
    }
}
