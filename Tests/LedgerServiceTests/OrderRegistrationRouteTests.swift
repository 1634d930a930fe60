import Foundation
import LedgerCore
import LedgerPostgres
@testable import LedgerService
import LedgerTestSupport
import Testing

/// http-api.md, registration: the codes a merchant backend meets, and what concurrent registrations of one order get.
@Suite("POST /v1/orders: registering an order, alone and racing")
final class OrderRegistrationRouteTests {
    let ledger: LedgerFixture
    init() throws { ledger = try .start("routes") }
    deinit { ledger.stop() }

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

        // The provider's response as the gateway sends it, its keys not in jsonb's order: the
        // stored one comes back reordered, and is still the same content.
        let response = #","providerResponse":{"code":0,"orderNo":"P1","payAddress":"0xabc","msg":"ok"}"#
        #expect(try ledger.register("R-2", amount: "40", extra: response).status == 201)
        let reordered = try ledger.register("R-2", amount: "40.00", extra: response)
        #expect(reordered.status == 200, "a stored provider response reads back in jsonb's key order: \(reordered)")
        #expect(try ledger.register("R-2", amount: "40", extra: #","providerResponse":{"code":1}"#).status == 409)

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
}
