import Foundation
@testable import LedgerAPI
import LedgerCore
import LedgerPostgres
@testable import LedgerService
import LedgerTestSupport
import Testing

/// http-api.md route by route: the success codes and the error codes a caller can meet.
@Suite("Every route answers with the codes the API contract gives it")
final class RouteTests {
    let ledger: LedgerFixture
    init() throws { ledger = try .start("routes") }
    deinit { ledger.stop() }

    // MARK: registration

    @Test("registering an order answers 201 with the order, 200 for the same content again (even spelled 40.00), and 409 for other content")
    func registrationIdempotency() throws {
        let first = try ledger.register("R-1", amount: "40")
        #expect(first.status == 201, "\(first)")
        #expect(first["merchantOrderNo"]?.stringValue == "R-1")
        #expect(first["status"]?.int64Value == 1)
        #expect(first["expectedAmount"]?.stringValue == "40")
        #expect(first["duplicate"]?.boolValue == false)

        let again = try ledger.register("R-1", amount: "40")
        #expect(again.status == 200, "\(again)")
        #expect(again["merchantOrderNo"]?.stringValue == "R-1")
        #expect(again["duplicate"]?.boolValue == true)
        let respelled = try ledger.register("R-1", amount: "40.00")
        #expect(respelled.status == 200, "the same amount spelled differently is the same content: \(respelled)")

        let other = try ledger.register("R-1", amount: "41")
        #expect(other.status == 409, "\(other)")
        #expect(other.isProblem, "\(other)")
        #expect(try ledger.count("SELECT count(*) AS n FROM ledger.events WHERE stream = 'order-R-1'") == 1)
        #expect(try ledger.order("R-1")["expectedAmount"]?.stringValue == "40")
    }

    @Test("a registration missing a field, with a bad order number or a bad amount is 400 and stores nothing")
    func registrationValidation() throws {
        let missing = try ledger.client.post("/v1/orders", token: ledger.ingest, json: #"{"merchantOrderNo":"V-1","provider":"web3","asset":"USDT"}"#)
        #expect(missing.status == 400 && missing.isProblem, "\(missing)")
        let badNo = try ledger.client.post("/v1/orders", token: ledger.ingest,
                                           json: #"{"merchantOrderNo":"no spaces!","provider":"web3","amount":"1","asset":"USDT"}"#)
        #expect(badNo.status == 400 && badNo.isProblem, "\(badNo)")
        let badAmount = try ledger.client.post("/v1/orders", token: ledger.ingest,
                                               json: #"{"merchantOrderNo":"V-2","provider":"web3","amount":"1e3","asset":"USDT"}"#)
        #expect(badAmount.status == 400 && badAmount.isProblem, "\(badAmount)")
        #expect(try ledger.count("SELECT count(*) AS n FROM ledger.events") == 0)
    }

    // MARK: observations

    @Test("a query observation answers 201 and moves the status; the same observation again is 200 with duplicate true")
    func observations() throws {
        _ = try ledger.register("O-1")
        let body = #"{"provider":"web3","response":{"code":0,"status":3,"statusText":"paid","txHash":"0xabc","amount":"40"},"observedAt":"2026-11-01T12:00:00Z"}"#
        let first = try ledger.client.post("/v1/orders/O-1/observations", token: ledger.ingest, json: body)
        #expect(first.status == 201, "\(first)")
        #expect(first["duplicate"]?.boolValue == false)
        #expect(first["order"]?["status"]?.int64Value == 3)
        #expect(first["order"]?["paid"]?.boolValue == true)
        #expect(first["order"]?["txHash"]?.stringValue == "0xabc")

        let again = try ledger.client.post("/v1/orders/O-1/observations", token: ledger.ingest, json: body)
        #expect(again.status == 200, "\(again)")
        #expect(again["duplicate"]?.boolValue == true)
        #expect(again["eventId"] == first["eventId"])
        #expect(try ledger.count("SELECT count(*) AS n FROM ledger.events WHERE stream = 'order-O-1'") == 2)
    }

    @Test("an observation from a provider without an adapter needs a status 1-6, and one naming another order is 400")
    func genericObservations() throws {
        _ = try ledger.register("O-2")
        let noStatus = try ledger.client.post("/v1/orders/O-2/observations", token: ledger.ingest,
                                              json: #"{"provider":"acme","response":{"state":"settled"}}"#)
        #expect(noStatus.status == 400 && noStatus.isProblem, "\(noStatus)")
        let outOfRange = try ledger.client.post("/v1/orders/O-2/observations", token: ledger.ingest,
                                                json: #"{"provider":"acme","response":{"status":7}}"#)
        #expect(outOfRange.status == 400 && outOfRange.isProblem, "\(outOfRange)")
        let otherOrder = try ledger.client.post("/v1/orders/O-2/observations", token: ledger.ingest,
                                                json: #"{"provider":"web3","response":{"code":0,"merchantOrderNo":"O-9","status":3}}"#)
        #expect(otherOrder.status == 400 && otherOrder.isProblem, "\(otherOrder)")
        let ok = try ledger.client.post("/v1/orders/O-2/observations", token: ledger.ingest,
                                        json: #"{"provider":"acme","response":{"status":2,"providerStatus":"pending_settlement"}}"#)
        #expect(ok.status == 201, "\(ok)")
        #expect(ok["order"]?["status"]?.int64Value == 2)
    }

    // MARK: client events

    @Test("an SDK callback answers 201, its retry with the same clientEventId 200 duplicate, and it never moves the status")
    func clientEvents() throws {
        _ = try ledger.register("C-1")
        let body = #"{"provider":"banxa","callback":"banxaDidCompleteCheckout","payload":{"orderId":"bx-1","status":"complete"},"clientEventId":"0b7c2a4e-3f1d-4c8a-9e2b-5d6f7a8b9c0d","sdkVersion":"1.2.0"}"#
        let first = try ledger.client.post("/v1/orders/C-1/client-events", token: ledger.ingest, json: body)
        #expect(first.status == 201, "\(first)")
        #expect(first["duplicate"]?.boolValue == false)
        let again = try ledger.client.post("/v1/orders/C-1/client-events", token: ledger.ingest, json: body)
        #expect(again.status == 200, "\(again)")
        #expect(again["duplicate"]?.boolValue == true)
        #expect(again["eventId"] == first["eventId"])

        let order = try ledger.order("C-1")
        #expect(order["status"]?.int64Value == 1, "a client signal is advisory: \(order)")
        #expect(order["paid"]?.boolValue == false)
        #expect(order["lastClientSignal"]?["callback"]?.stringValue == "banxaDidCompleteCheckout")
    }

    @Test("an SDK callback with an unknown name, a bad payload or a clientEventId that is not a UUID is 400")
    func clientEventValidation() throws {
        _ = try ledger.register("C-2")
        for body in [
            #"{"provider":"banxa","callback":"banxaDidExplode","clientEventId":"0b7c2a4e-3f1d-4c8a-9e2b-5d6f7a8b9c01"}"#,
            #"{"provider":"banxa","callback":"banxaDidFail","payload":{"nope":1},"clientEventId":"0b7c2a4e-3f1d-4c8a-9e2b-5d6f7a8b9c02"}"#,
            #"{"provider":"banxa","callback":"banxaDidDismiss","clientEventId":"not-a-uuid"}"#,
        ] {
            let reply = try ledger.client.post("/v1/orders/C-2/client-events", token: ledger.ingest, json: body)
            #expect(reply.status == 400 && reply.isProblem, "\(body) → \(reply)")
        }
    }

    @Test("a BankPay enrollment callback answers 201, its retry 200 duplicate, and moves the enrollment's read model")
    func enrollmentEvents() throws {
        let body = #"{"provider":"bankpay","callback":"onSuccess","payload":{"type":"bankAccountAdded","data":{"intent_id":"in_123"}},"clientEventId":"1b7c2a4e-3f1d-4c8a-9e2b-5d6f7a8b9c0d"}"#
        let first = try ledger.client.post("/v1/enrollments/ENR-1/client-events", token: ledger.ingest, json: body)
        #expect(first.status == 201, "\(first)")
        let again = try ledger.client.post("/v1/enrollments/ENR-1/client-events", token: ledger.ingest, json: body)
        #expect(again.status == 200, "\(again)")
        #expect(again["duplicate"]?.boolValue == true)
        #expect(try ledger.query("SELECT phase FROM ledger.enrollments WHERE enrollment_ref = 'ENR-1'").string(0, "phase") == "bank_account_added")

        let notBankPay = try ledger.client.post("/v1/enrollments/ENR-1/client-events", token: ledger.ingest,
                                                json: #"{"provider":"banxa","callback":"banxaDidDismiss","clientEventId":"1b7c2a4e-3f1d-4c8a-9e2b-5d6f7a8b9c0e"}"#)
        #expect(notBankPay.status == 400 && notBankPay.isProblem, "\(notBankPay)")
    }

    // MARK: client tokens

    @Test("minting a client token answers 201 with a token valid one hour, or ttlSeconds when shorter; more than 3600 is 400")
    func clientTokens() throws {
        _ = try ledger.register("T-1")
        let now = Timestamp.now().seconds
        let hour = try ledger.client.post("/v1/orders/T-1/client-tokens", token: ledger.ingest, json: "")
        #expect(hour.status == 201, "\(hour)")
        let token = try #require(hour["token"]?.stringValue)
        #expect(token.hasPrefix("lgr_"))
        let expires = try #require(hour["expiresAt"]?.stringValue.flatMap { Timestamp.parse($0) })
        #expect(abs(expires.seconds - (now + 3600)) <= 30, "expiresAt \(expires)")

        let short = try ledger.client.post("/v1/orders/T-1/client-tokens", token: ledger.ingest, json: #"{"ttlSeconds":120}"#)
        #expect(short.status == 201, "\(short)")
        let shortExpiry = try #require(short["expiresAt"]?.stringValue.flatMap { Timestamp.parse($0) })
        #expect(abs(shortExpiry.seconds - (now + 120)) <= 30, "expiresAt \(shortExpiry)")

        for bad in [#"{"ttlSeconds":3601}"#, #"{"ttlSeconds":0}"#, #"{"ttlSeconds":"600"}"#] {
            let reply = try ledger.client.post("/v1/orders/T-1/client-tokens", token: ledger.ingest, json: bad)
            #expect(reply.status == 400 && reply.isProblem, "\(bad) → \(reply)")
        }
        let unknown = try ledger.client.post("/v1/orders/T-404/client-tokens", token: ledger.ingest, json: "{}")
        #expect(unknown.status == 404 && unknown.isProblem, "\(unknown)")

        // The minted token is a working client credential for its order.
        let relayed = try ledger.client.post("/v1/orders/T-1/client-events", token: token,
                                             json: #"{"provider":"banxa","callback":"banxaDidDismiss","clientEventId":"2b7c2a4e-3f1d-4c8a-9e2b-5d6f7a8b9c0d"}"#)
        #expect(relayed.status == 201, "\(relayed)")
        // Only the hash is stored.
        #expect(try ledger.count("SELECT count(*) AS n FROM ledger.tokens t WHERE position($1 in t::text) > 0", [.text(token)]) == 0)
    }

    // MARK: corrections

    @Test("an auditor's correction answers 201, moves an unpaid order's status, and names the auditor as actor")
    func corrections() throws {
        _ = try ledger.register("K-1")
        let reply = try ledger.client.post("/v1/orders/K-1/corrections", token: ledger.auditor,
                                           json: #"{"status":5,"reason":"customer cancelled by phone"}"#)
        #expect(reply.status == 201, "\(reply)")
        #expect(reply["order"]?["status"]?.int64Value == 5)
        let stored = try ledger.query("""
            SELECT source, payload->>'actor' AS actor, payload->>'reason' AS reason FROM ledger.events
             WHERE stream = 'order-K-1' ORDER BY position DESC LIMIT 1
            """)
        #expect(try stored.string(0, "source") == "operator")
        #expect(try stored.value(0, "actor") == "auditor-ann")
        #expect(try stored.value(0, "reason") == "customer cancelled by phone")
    }

    /// http-api.md: a replayed write (same content) answers 200 duplicate and appends
    /// nothing. A correction sent without an id is the same correction again while it is
    /// still the order's newest event (a retry after a 503 whose commit went through).
    @Test("a correction replayed without a key is 200 duplicate while it is the order's newest event; after another event it is new")
    func correctionReplay() throws {
        _ = try ledger.register("K-3")
        let body = #"{"status":6,"reason":"held for review"}"#
        func correct(_ headers: [(String, String)] = []) throws -> Reply {
            try ledger.client.post("/v1/orders/K-3/corrections", token: ledger.auditor, json: body, headers: headers)
        }
        func events() throws -> Int64 { try ledger.count("SELECT count(*) AS n FROM ledger.events WHERE stream = 'order-K-3'") }
        let first = try correct()
        #expect(first.status == 201, "\(first)")
        let replay = try correct()
        #expect(replay.status == 200 && replay["duplicate"]?.boolValue == true, "\(replay)")
        #expect(replay["eventId"]?.stringValue == first["eventId"]?.stringValue)
        #expect(try events() == 2, "the registration and one correction")

        #expect(try ledger.sendWeb3(LedgerFixture.web3Body("K-3", status: 2)).status == 200)
        let afterWebhook = try correct()
        #expect(afterWebhook.status == 201 && afterWebhook["duplicate"]?.boolValue == false, "a new decision: \(afterWebhook)")
        #expect(try events() == 4)
        let explicit = try correct([("Idempotency-Key", "K-3-again")])
        #expect(explicit.status == 201, "an Idempotency-Key decides alone: \(explicit)")
        #expect(try events() == 5)

        // Copies racing see the same newest event: one is stored.
        #expect(try ledger.sendWeb3(LedgerFixture.web3Body("K-3", status: 1)).status == 200)
        let port = ledger.port
        let token = ledger.auditor
        let statuses = Locked([Int]())
        onThreads(8) { _ in
            let reply = try? HTTPClient(port: port).post("/v1/orders/K-3/corrections", token: token, json: body)
            statuses.with { $0.append(reply?.status ?? 0) }
        }
        #expect(statuses.snapshot.sorted() == [200, 200, 200, 200, 200, 200, 200, 201], "\(statuses.snapshot)")
        #expect(try events() == 7)
    }

    @Test("a correction outranked by a report with a later observedAt is a new event when sent again, not a replay")
    func correctionResentWhileOutranked() throws {
        _ = try ledger.register("K-4")
        let later = Timestamp(seconds: Timestamp.now().seconds + 120).rfc3339
        let report = try ledger.client.post("/v1/orders/K-4/observations", token: ledger.ingest,
                                            json: #"{"provider":"acmepay","response":{"status":2},"observedAt":"\#(later)"}"#)
        #expect(report.status == 201, "\(report)")
        let body = #"{"status":5,"reason":"customer cancelled"}"#
        let first = try ledger.client.post("/v1/orders/K-4/corrections", token: ledger.auditor, json: body)
        #expect(first.status == 201, "\(first)")
        #expect(try ledger.order("K-4")["status"]?.int64Value == 2, "the report's later observedAt outranks the correction")
        let again = try ledger.client.post("/v1/orders/K-4/corrections", token: ledger.auditor, json: body)
        #expect(again.status == 201 && again["duplicate"]?.boolValue == false, "sending it again is no replay: \(again)")
        #expect(again["eventId"]?.stringValue != first["eventId"]?.stringValue)
    }

    @Test("a correction cannot move a paid order out of paid: it is recorded as a conflict needing attention")
    func correctionOfPaidOrder() throws {
        _ = try ledger.register("K-3")
        #expect(try ledger.sendWeb3(LedgerFixture.web3Body("K-3", status: 3), timestamp: Timestamp.now().seconds - 5).status == 200)
        let reply = try ledger.client.post("/v1/orders/K-3/corrections", token: ledger.auditor,
                                           json: #"{"status":5,"reason":"customer says it expired"}"#)
        #expect(reply.status == 201, "\(reply)")
        let order = try ledger.order("K-3", token: ledger.auditor)
        #expect(order["status"]?.int64Value == 3, "paid is sticky: \(order)")
        #expect(order["paid"]?.boolValue == true)
        #expect(order["attention"]?.boolValue == true)
        #expect(order["conflicts"]?.arrayValue?.contains { $0["kind"]?.stringValue == "status_conflict" } == true, "\(order)")
    }

    @Test("a paid webhook whose amount differs from the registered one marks the order for attention with an amount mismatch")
    func amountMismatch() throws {
        _ = try ledger.register("K-4", amount: "40.00")
        #expect(try ledger.sendWeb3(LedgerFixture.web3Body("K-4", status: 3, amount: "39.99")).status == 200)
        let order = try ledger.order("K-4")
        #expect(order["status"]?.int64Value == 3)
        #expect(order["attention"]?.boolValue == true, "\(order)")
        #expect(order["conflicts"]?.arrayValue?.contains { $0["kind"]?.stringValue == "amount_mismatch" } == true, "\(order)")
        #expect(try ledger.client.get("/v1/orders?attention=true", token: ledger.support)["orders"]?.arrayValue?.count == 1)
    }

    @Test("a correction retried with the same Idempotency-Key is 200 duplicate; an unknown order is 404; no reason is 400")
    func correctionErrors() throws {
        _ = try ledger.register("K-2")
        let body = #"{"status":6,"reason":"held for review"}"#
        let key = [("Idempotency-Key", "fix-K-2-1")]
        let first = try ledger.client.post("/v1/orders/K-2/corrections", token: ledger.auditor, json: body, headers: key)
        #expect(first.status == 201, "\(first)")
        let retry = try ledger.client.post("/v1/orders/K-2/corrections", token: ledger.auditor, json: body, headers: key)
        #expect(retry.status == 200, "\(retry)")
        #expect(retry["duplicate"]?.boolValue == true)

        let unknown = try ledger.client.post("/v1/orders/K-404/corrections", token: ledger.auditor, json: body)
        #expect(unknown.status == 404 && unknown.isProblem, "\(unknown)")
        let noReason = try ledger.client.post("/v1/orders/K-2/corrections", token: ledger.auditor, json: #"{"status":5}"#)
        #expect(noReason.status == 400 && noReason.isProblem, "\(noReason)")
        let badKey = try ledger.client.post("/v1/orders/K-2/corrections", token: ledger.auditor, json: body,
                                            headers: [("Idempotency-Key", String(repeating: "k", count: 129))])
        #expect(badKey.status == 400 && badKey.isProblem && badKey.text.contains("Idempotency-Key"), "\(badKey)")
    }

    // MARK: reading one order

    @Test("an order reads back with every read-model field, emails masked except for auditors; an unknown order is 404")
    func getOrder() throws {
        _ = try ledger.register("G-1", extra: #","externalCustomerId":"alice@example.com""#)
        let order = try ledger.order("G-1")
        #expect(order.status == 200, "\(order)")
        #expect(order.header("Content-Type")?.hasPrefix("application/json") == true)
        let fields = Set(order.json?.objectFields?.map(\.0) ?? [])
        let required: Set = ["merchantOrderNo", "provider", "status", "statusName", "paid", "attention", "latePayment", "refunded",
                             "expectedAmount", "paidAmount", "asset", "providerOrderId", "txHash", "createdAt", "updatedAt",
                             "paidAt", "lastClientSignal", "conflicts", "eventCount", "lastPosition"]
        #expect(required.subtracting(fields).isEmpty, "missing \(required.subtracting(fields))")
        #expect(order["statusName"]?.stringValue == "awaiting_payment")
        #expect(order["eventCount"]?.int64Value == 1)

        #expect(!order.text.contains("alice@example.com"), "support sees emails masked: \(order)")
        #expect(order.text.contains("@example.com"))
        #expect(try !ledger.order("G-1", token: ledger.ingest).text.contains("alice@example.com"))
        #expect(try ledger.order("G-1", token: ledger.auditor)["externalCustomerId"]?.stringValue == "alice@example.com")

        let unknown = try ledger.order("G-404")
        #expect(unknown.status == 404 && unknown.isProblem, "\(unknown)")
        let invalid = try ledger.order("bad*no")
        #expect(invalid.status == 400 && invalid.isProblem, "\(invalid)")
    }

    @Test("asOf gives the state as the ledger knew it at that time; before the order existed it is 404; a bad time is 400")
    func getOrderAsOf() throws {
        _ = try ledger.register("A-1")
        let paid = try ledger.sendWeb3(LedgerFixture.web3Body("A-1", status: 3))
        #expect(paid.status == 200, "\(paid)")
        let events = try #require(ledger.client.get("/v1/orders/A-1/events", token: ledger.auditor)["events"]?.arrayValue)
        #expect(events.count == 2)
        let registeredAt = try #require(events.first?["recordedAt"]?.stringValue)
        let paidAt = try #require(events.last?["recordedAt"]?.stringValue)

        let then = try ledger.client.get("/v1/orders/A-1?asOf=\(registeredAt)", token: ledger.support)
        #expect(then.status == 200, "\(then)")
        #expect(then["status"]?.int64Value == 1)
        #expect(then["eventCount"]?.int64Value == 1)
        let later = try ledger.client.get("/v1/orders/A-1?asOf=\(paidAt)", token: ledger.support)
        #expect(later["status"]?.int64Value == 3, "\(later)")
        #expect(later["paid"]?.boolValue == true)
        #expect(try ledger.order("A-1")["status"]?.int64Value == 3)

        let before = try ledger.client.get("/v1/orders/A-1?asOf=2000-01-01T00:00:00Z", token: ledger.support)
        #expect(before.status == 404 && before.isProblem, "\(before)")
        let bad = try ledger.client.get("/v1/orders/A-1?asOf=yesterday", token: ledger.support)
        #expect(bad.status == 400 && bad.isProblem, "\(bad)")
    }

    @Test("asOf goes by when the ledger recorded an event, not by the time the provider claims: a late webhook is not known earlier")
    func asOfUsesRecordedTime() throws {
        _ = try ledger.register("A-2")
        let registeredAt = try #require(ledger.client.get("/v1/orders/A-2/events", token: ledger.auditor)["events"]?
            .arrayValue?.first?["recordedAt"]?.stringValue)
        Thread.sleep(forTimeInterval: 0.05)
        // Signed 100 s before the registration, delivered after it.
        let late = try ledger.sendWeb3(LedgerFixture.web3Body("A-2", status: 3), timestamp: Timestamp.now().seconds - 100)
        #expect(late.status == 200, "\(late)")
        let then = try ledger.client.get("/v1/orders/A-2?asOf=\(registeredAt)", token: ledger.support)
        #expect(then["status"]?.int64Value == 1, "at the registration the ledger had not yet received the payment: \(then)")
        #expect(then["eventCount"]?.int64Value == 1)
        #expect(try ledger.order("A-2")["status"]?.int64Value == 3)
    }

    // MARK: timeline

    @Test("the timeline lists events oldest first with the status after each; only auditors see raw bodies and unmasked emails")
    func timeline() throws {
        _ = try ledger.register("L-1", extra: #","externalCustomerId":"bob@example.com""#)
        let now = Timestamp.now().seconds
        let confirming = LedgerFixture.web3Body("L-1", status: 2)
        #expect(try ledger.sendWeb3(confirming, timestamp: now - 10).status == 200)
        #expect(try ledger.sendWeb3(LedgerFixture.web3Body("L-1", status: 3), timestamp: now).status == 200)
        let signal = try ledger.client.post("/v1/orders/L-1/client-events", token: ledger.ingest,
                                            json: #"{"provider":"banxa","callback":"banxaDidDismiss","clientEventId":"3b7c2a4e-3f1d-4c8a-9e2b-5d6f7a8b9c0d"}"#)
        #expect(signal.status == 201)

        let support = try ledger.client.get("/v1/orders/L-1/events", token: ledger.support)
        #expect(support.status == 200, "\(support)")
        let events = try #require(support["events"]?.arrayValue)
        #expect(events.count == 4)
        let positions = events.compactMap { $0["position"]?.int64Value }
        #expect(positions == positions.sorted() && Set(positions).count == 4, "oldest first: \(positions)")
        #expect(events.map { $0["statusAfter"]?.int64Value } == [1, 2, 3, 3])
        #expect(events.map { $0["type"]?.stringValue } == ["OrderRegistered", "StatusObserved", "StatusObserved", "ClientSignal"])
        #expect(events.map { $0["source"]?.stringValue } == ["query", "webhook", "webhook", "client"])
        for field in ["eventId", "type", "source", "provider", "recordedAt", "observedAt", "verified", "payload", "statusAfter"] {
            #expect(events.allSatisfy { $0[field] != nil }, "every event has \(field)")
        }
        #expect(events[1]["verified"]?.boolValue == true, "a signed webhook is verified")
        #expect(events.allSatisfy { $0["raw"] == nil }, "support staff never see raw bodies")
        #expect(!support.text.contains("bob@example.com"))

        let auditor = try ledger.client.get("/v1/orders/L-1/events", token: ledger.auditor)
        let audited = try #require(auditor["events"]?.arrayValue)
        let raw = try #require(audited[1]["raw"]?.stringValue)
        #expect(Data(base64Encoded: raw).map(Array.init) == confirming, "the raw webhook body, byte for byte")
        #expect(auditor.text.contains("bob@example.com"))

        let unknown = try ledger.client.get("/v1/orders/L-404/events", token: ledger.support)
        #expect(unknown.status == 404 && unknown.isProblem, "\(unknown)")
    }

    // MARK: list

    @Test("the list pages newest update first with keyset cursors, showing every order exactly once")
    func listPagination() throws {
        for i in 1...7 { #expect(try ledger.register("P-\(i)").status == 201) }
        var seen: [String] = []
        var pageSizes: [Int] = []
        var cursor: String?
        for _ in 0..<10 {
            let target = "/v1/orders?limit=3" + (cursor.map { "&cursor=\($0)" } ?? "")
            let page = try ledger.client.get(target, token: ledger.support)
            #expect(page.status == 200, "\(page)")
            let orders = page["orders"]?.arrayValue ?? []
            pageSizes.append(orders.count)
            seen += orders.compactMap { $0["merchantOrderNo"]?.stringValue }
            cursor = page["nextCursor"]?.stringValue
            if cursor == nil { break }
        }
        #expect(pageSizes == [3, 3, 1], "pages \(pageSizes)")
        #expect(seen == (1...7).reversed().map { "P-\($0)" }, "newest update first, each once: \(seen)")

        // A later update moves an order to the front.
        #expect(try ledger.sendWeb3(LedgerFixture.web3Body("P-3", status: 2)).status == 200)
        let first = try ledger.client.get("/v1/orders?limit=1", token: ledger.support)
        #expect(first["orders"]?.arrayValue?.first?["merchantOrderNo"]?.stringValue == "P-3")
    }

    @Test("without a limit a page holds 50 orders, and limit=500 is allowed")
    func listDefaultLimit() throws {
        for i in 0..<51 { #expect(try ledger.register("D-\(i)").status == 201) }
        let page = try ledger.client.get("/v1/orders", token: ledger.support)
        #expect(page["orders"]?.arrayValue?.count == 50, "\(page.text.prefix(200))")
        #expect(page["nextCursor"]?.stringValue != nil)
        let all = try ledger.client.get("/v1/orders?limit=500", token: ledger.support)
        #expect(all["orders"]?.arrayValue?.count == 51)
        #expect(all["nextCursor"]?.isNull == true)
    }

    @Test("list filters narrow the orders; a cursor the ledger did not issue, a bad limit or an unknown filter is 400")
    func listFilters() throws {
        for no in ["F-1", "F-2", "F-3"] { _ = try ledger.register(no) }
        #expect(try ledger.sendWeb3(LedgerFixture.web3Body("F-2", status: 3, extra: #","txHash":"0xf2f2""#)).status == 200)
        func numbers(_ query: String) throws -> [String] {
            let reply = try ledger.client.get("/v1/orders?" + query, token: ledger.auditor)
            #expect(reply.status == 200, "\(query) → \(reply)")
            return (reply["orders"]?.arrayValue ?? []).compactMap { $0["merchantOrderNo"]?.stringValue }.sorted()
        }
        #expect(try numbers("status=3") == ["F-2"])
        #expect(try numbers("paid=true") == ["F-2"])
        #expect(try numbers("paid=false") == ["F-1", "F-3"])
        #expect(try numbers("q=GW-F-2") == ["F-2"], "q matches the provider order id exactly")
        #expect(try numbers("q=F-3") == ["F-3"])
        #expect(try numbers("q=0xf2f2") == ["F-2"], "q matches the tx hash exactly")
        #expect(try numbers("q=0xf2f") == [], "q is an exact match, not a prefix")
        #expect(try numbers("provider=web3") == ["F-1", "F-2", "F-3"])
        #expect(try numbers("provider=banxa") == [])
        #expect(try numbers("updatedFrom=2000-01-01T00:00:00Z&updatedTo=2000-01-02T00:00:00Z") == [])

        for bad in ["cursor=bm90LWEtY3Vyc29y", "cursor=%%%", "limit=0", "limit=501", "status=9", "paid=yes", "colour=red",
                    "updatedFrom=soon"] {
            let reply = try ledger.client.get("/v1/orders?" + bad, token: ledger.support)
            #expect(reply.status == 400 && reply.isProblem, "\(bad) → \(reply)")
        }
    }

    @Test("updatedFrom and updatedTo are a half-open interval of update times: from included, to excluded")
    func listUpdatedInterval() throws {
        var times: [String] = []
        for no in ["U-1", "U-2", "U-3"] {
            let reply = try ledger.register(no)
            #expect(reply.status == 201, "\(reply)")
            times.append(try #require(reply["updatedAt"]?.stringValue))
            Thread.sleep(forTimeInterval: 0.01)   // distinct update times
        }
        #expect(Set(times).count == 3, "\(times)")
        func numbers(_ query: String) throws -> [String] {
            let reply = try ledger.client.get("/v1/orders?" + query, token: ledger.support)
            #expect(reply.status == 200, "\(query) → \(reply)")
            return (reply["orders"]?.arrayValue ?? []).compactMap { $0["merchantOrderNo"]?.stringValue }
        }
        #expect(try numbers("updatedFrom=\(times[1])") == ["U-3", "U-2"])
        #expect(try numbers("updatedTo=\(times[1])") == ["U-1"])
        #expect(try numbers("updatedFrom=\(times[0])&updatedTo=\(times[2])") == ["U-2", "U-1"])
        #expect(try numbers("updatedFrom=\(times[2])&updatedTo=\(times[2])") == [], "an empty interval")
    }

    /// Orders committed in one group commit share their update time: the cursor must
    /// also hold the order number, or a page boundary inside a tie skips or repeats some.
    @Test("orders sharing one update time page through keyset cursors each exactly once, by number within the tie")
    func listPagesThroughTies() throws {
        for i in 1...5 { #expect(try ledger.register("T-\(i)").status == 201) }
        #expect(try ledger.register("T-0").status == 201)
        _ = try ledger.query("UPDATE ledger.orders SET updated_at = '2026-11-01T00:00:00Z' WHERE merchant_order_no LIKE 'T-_' AND merchant_order_no <> 'T-0'")
        var seen: [String] = []
        var cursor: String?
        for _ in 0..<10 {
            let page = try ledger.client.get("/v1/orders?limit=2" + (cursor.map { "&cursor=\($0)" } ?? ""), token: ledger.support)
            #expect(page.status == 200, "\(page)")
            seen += (page["orders"]?.arrayValue ?? []).compactMap { $0["merchantOrderNo"]?.stringValue }
            cursor = page["nextCursor"]?.stringValue
            if cursor == nil { break }
        }
        #expect(seen == ["T-0", "T-5", "T-4", "T-3", "T-2", "T-1"], "\(seen)")
    }

    @Test("q is answered from an index on each of its four columns, never by reading every order (Migrations 009, 026)")
    func searchUsesIndexes() throws {
        let c = try PostgresConnection(connectionString: ledger.databaseURL)
        defer { c.close() }
        try c.query("SET enable_seqscan = off")   // a table this small would be read whole by choice
        let plan = try c.query("""
            EXPLAIN SELECT merchant_order_no FROM ledger.orders
             WHERE merchant_order_no = $1 OR provider_order_id = $1 OR tx_hash = $1 OR external_customer_id = $1
            """, [.text("0xf2f2")])
        let text = try (0..<plan.count).map { try plan.string($0, "QUERY PLAN") }.joined(separator: "\n")
        #expect(!text.contains("Seq Scan"), "\(text)")
        // (merchant_order_no is the primary key; on a table this small the planner may read it
        // from another index that holds it, which is no scan of the table either.)
        for index in ["orders_provider_order_id", "orders_tx_hash", "orders_external_customer_id"] {
            #expect(text.contains(index), "\(index) unused:\n\(text)")
        }
    }

    @Test("support staff can find an order by its customer's email but see the email masked in the list")
    func listMasksEmails() throws {
        _ = try ledger.register("E-1", extra: #","externalCustomerId":"carol@example.com""#)
        let support = try ledger.client.get("/v1/orders?q=carol@example.com", token: ledger.support)
        #expect(support["orders"]?.arrayValue?.count == 1, "\(support)")
        #expect(!support.text.contains("carol@example.com"), "\(support)")
        let auditor = try ledger.client.get("/v1/orders?q=carol@example.com", token: ledger.auditor)
        #expect(auditor.text.contains("carol@example.com"))
    }

    @Test("a write is visible to a read that follows it at once")
    func readYourWrites() throws {
        _ = try ledger.register("RW-1")
        let base = Timestamp.now().seconds - 100
        for i in 0..<20 {
            let status = [2, 1, 6, 5][i % 4]
            let observedAt = Timestamp(seconds: base + Int64(i)).rfc3339
            let write = try ledger.client.post("/v1/orders/RW-1/observations", token: ledger.ingest,
                                               json: #"{"provider":"acme","response":{"status":\#(status)},"observedAt":"\#(observedAt)"}"#)
            #expect(write.status == 201, "\(write)")
            let read = try ledger.order("RW-1", token: ledger.ingest)
            #expect(read["status"]?.int64Value == Int64(status), "write \(i) not visible: \(read)")
            #expect(read["eventCount"]?.int64Value == Int64(i + 2))
        }
    }

    @Test("the same registration sent by 8 clients at once is created once: one 201, the rest 200")
    func concurrentRegistration() throws {
        let port = ledger.port
        let token = ledger.ingest
        let statuses = Locked([Int]())
        onThreads(8) { _ in
            let reply = try? HTTPClient(port: port).post("/v1/orders", token: token,
                                                          json: #"{"merchantOrderNo":"RACE-1","provider":"web3","amount":"40","asset":"USDT"}"#)
            statuses.with { $0.append(reply?.status ?? 0) }
        }
        #expect(statuses.snapshot.sorted() == [200, 200, 200, 200, 200, 200, 200, 201], "\(statuses.snapshot)")
        #expect(try ledger.count("SELECT count(*) AS n FROM ledger.events WHERE stream = 'order-RACE-1'") == 1)
    }

    @Test("registrations of one order with different content racing: exactly one wins, the others are 409 or 200 by content")
    func concurrentConflictingRegistration() throws {
        let port = ledger.port
        let token = ledger.ingest
        let results = Locked([(amount: String, status: Int)]())
        onThreads(8) { i in
            let amount = i % 2 == 0 ? "40" : "41"
            let reply = try? HTTPClient(port: port).post("/v1/orders", token: token,
                                                          json: #"{"merchantOrderNo":"RACE-2","provider":"web3","amount":"\#(amount)","asset":"USDT"}"#)
            results.with { $0.append((amount, reply?.status ?? 0)) }
        }
        let all = results.snapshot
        let winners = all.filter { $0.status == 201 }
        #expect(winners.count == 1, "\(all)")
        if let winner = winners.first {
            for r in all where r.status != 201 {
                #expect(r.status == (r.amount == winner.amount ? 200 : 409), "\(r) after \(winner) won")
            }
            #expect(try ledger.order("RACE-2")["expectedAmount"]?.stringValue == winner.amount)
        }
    }

    // MARK: ledger head

    @Test("the ledger head is the newest event's position and chain hash")
    func ledgerHead() throws {
        let empty = try ledger.client.get("/v1/ledger/head", token: ledger.auditor)
        #expect(empty.status == 200, "\(empty)")
        #expect(empty["position"]?.int64Value == 0, "an empty ledger's head is position 0: \(empty)")
        #expect(empty["hash"]?.stringValue == String(repeating: "0", count: 64))
        _ = try ledger.register("H-1")
        _ = try ledger.register("H-2")
        let head = try ledger.client.get("/v1/ledger/head", token: ledger.auditor)
        #expect(head.status == 200, "\(head)")
        let newest = try ledger.query("SELECT position, encode(hash, 'hex') AS hash FROM ledger.events ORDER BY position DESC LIMIT 1")
        #expect(head["position"]?.int64Value == (try newest.int64(0, "position")))
        #expect(head["hash"]?.stringValue == (try newest.string(0, "hash")))
        #expect(head["hash"]?.stringValue?.count == 64)
    }

    // MARK: operations

    @Test("healthz and readyz answer 200 without a token while the database is up")
    func healthAndReadiness() throws {
        let health = try ledger.client.get("/healthz")
        #expect(health.status == 200, "\(health)")
        let ready = try ledger.client.get("/readyz")
        #expect(ready.status == 200, "\(ready)")
    }

    @Test("metrics are Prometheus text counting requests by route and status, appended events, rejected deliveries and pool use")
    func metrics() throws {
        #expect(try ledger.register("M-1").status == 201)
        let forged = try ledger.sendWeb3(LedgerFixture.web3Body("M-1", status: 3), key: "not-the-key")
        #expect(forged.status == 401)
        let reply = try ledger.client.get("/metrics")
        #expect(reply.status == 200)
        #expect(reply.header("Content-Type")?.hasPrefix("text/plain") == true, "\(reply.header("Content-Type") ?? "-")")
        let text = reply.text
        for family in ["ledger_http_requests_total", "ledger_events_appended_total", "ledger_rejected_deliveries_total",
                       "ledger_db_pool_connections", "ledger_db_read_pool_connections", "ledger_quarantine_full_total"] {
            #expect(text.contains("# TYPE \(family) "), "no \(family) family")
        }
        let lines = text.split(separator: "\n")
        #expect(lines.contains { $0.hasPrefix("ledger_http_requests_total{") && $0.contains(#"route="register_order""#) && $0.contains(#"status="201""#) },
                "requests are counted by route and status")
        #expect(lines.contains { $0.hasPrefix("ledger_events_appended_total") && $0.hasSuffix(" 1") }, "one event appended")
        #expect(lines.contains { $0 == #"ledger_rejected_deliveries_total{reason="bad_signature"} 1"# })
        #expect(lines.contains { $0.hasPrefix("ledger_db_pool_connections{") })
        #expect(lines.contains { $0.hasPrefix(#"ledger_db_read_pool_connections{state="max"}"#) })
        #expect(lines.contains { $0.hasPrefix("ledger_http_request_duration_seconds_bucket{") && $0.contains(#"route="register_order""#) },
                "a latency histogram by route")
        var seeded = try ledger.metric("ledger_group_commit_hints_seeded")
        for _ in 0..<50 where seeded != 1 {
            Thread.sleep(forTimeInterval: 0.1)
            seeded = try ledger.metric("ledger_group_commit_hints_seeded")
        }
        #expect(seeded == 1, "the writer's probe hints were read from the store at startup")
    }

    @Test("GET /openapi.json serves API/openapi.json byte for byte, as JSON (OpenAPIDocumentTests checks what it says)")
    func openAPI() throws {
        let reply = try ledger.client.get("/openapi.json")
        #expect(reply.status == 200)
        #expect(reply.header("Content-Type")?.hasPrefix("application/json") == true, "\(reply)")
        let file = try #require(FileManager.default.contents(atPath: LedgerFixture.openAPIPath))
        #expect(reply.body == [UInt8](file))
    }

    @Test("an unknown path is 404 and a wrong method 405, both as problems")
    func routingFailures() throws {
        let missing = try ledger.client.get("/v1/nothing-here", token: ledger.auditor)
        #expect(missing.status == 404 && missing.isProblem, "\(missing)")
        let wrongMethod = try ledger.client.send("DELETE", "/v1/orders", headers: [("Authorization", "Bearer " + ledger.auditor)])
        #expect(wrongMethod.status == 405 && wrongMethod.isProblem, "\(wrongMethod)")
        #expect(wrongMethod.header("Allow") != nil)
    }
}

@Suite("Readiness")
struct ReadinessTests {
    @Test("readyz answers 503 with Retry-After while a migration is pending, and healthz still 200")
    func pendingMigration() throws {
        var migrations = try Migration.load(from: TestDatabase.migrationsDirectory)
        migrations.append(Migration(name: "999_not_yet_applied.sql", sql: "SELECT 1;"))
        let ledger = try LedgerFixture.start("ready", migrator: Migrator(migrations: migrations))
        defer { ledger.stop() }
        let ready = try ledger.client.get("/readyz")
        #expect(ready.status == 503 && ready.isProblem, "\(ready)")
        #expect(ready.header("Retry-After") != nil)
        #expect(try ledger.client.get("/healthz").status == 200)
    }

    @Test("readyz answers 200 when every migration is applied")
    func currentMigrations() throws {
        let ledger = try LedgerFixture.start("ready", migrator: Migrator(migrations: Migration.load(from: TestDatabase.migrationsDirectory)))
        defer { ledger.stop() }
        let ready = try ledger.client.get("/readyz")
        #expect(ready.status == 200, "\(ready)")
    }
}
