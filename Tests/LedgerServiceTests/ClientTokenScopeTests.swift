import Foundation
import LedgerCore
import LedgerTestSupport
import Testing

/// A client token is minted for one app and one order (or one enrollment): it
/// relays that order's (or enrollment's) SDK callbacks and can reach nothing else.
@Suite("Client tokens are scoped to one order or one enrollment")
final class ClientTokenScopeTests {
    let ledger: LedgerFixture
    init() throws {
        ledger = try .start("scope")
        for no in ["S-A", "S-B"] {
            let reply = try ledger.register(no)
            guard reply.status == 201 else { throw ClientError.malformed("register \(no): \(reply)") }
        }
    }
    deinit { ledger.stop() }

    private func mint(_ no: String, ttl: Int? = nil) throws -> String {
        try mintWithExpiry(no, ttl: ttl).token
    }

    private func mintWithExpiry(_ no: String, ttl: Int? = nil) throws -> (token: String, expiresAt: Timestamp) {
        let reply = try ledger.client.post("/v1/orders/\(no)/client-tokens", token: ledger.ingest,
                                           json: ttl.map { #"{"ttlSeconds":\#($0)}"# } ?? "{}")
        guard reply.status == 201, let token = reply["token"]?.stringValue,
              let expires = reply["expiresAt"]?.stringValue.flatMap({ Timestamp.parse($0) }) else {
            throw ClientError.malformed("mint: \(reply)")
        }
        return (token, expires)
    }

    private func signal(_ id: Int) -> String {
        #"{"provider":"banxa","callback":"banxaDidCompleteCheckout","payload":{"orderId":"bx-9"},"clientEventId":"4b7c2a4e-3f1d-4c8a-9e2b-5d6f7a8b9c\#(String(format: "%02d", id))"}"#
    }

    @Test("a token minted for order A relays A's callbacks but gets 403 for order B, for reading A, and for everything else")
    func cannotReachAnotherOrder() throws {
        let token = try mint("S-A")
        let own = try ledger.client.post("/v1/orders/S-A/client-events", token: token, json: signal(1))
        #expect(own.status == 201, "\(own)")

        let other = try ledger.client.post("/v1/orders/S-B/client-events", token: token, json: signal(2))
        #expect(other.status == 403 && other.isProblem, "\(other)")
        for target in ["/v1/orders/S-A", "/v1/orders/S-B", "/v1/orders/S-A/events", "/v1/orders"] {
            let read = try ledger.client.get(target, token: token)
            #expect(read.status == 403 && read.isProblem, "GET \(target) → \(read)")
        }
        let remint = try ledger.client.post("/v1/orders/S-A/client-tokens", token: token, json: "{}")
        #expect(remint.status == 403, "a client token cannot mint more: \(remint)")
        let observe = try ledger.client.post("/v1/orders/S-A/observations", token: token,
                                             json: #"{"provider":"acme","response":{"status":3}}"#)
        #expect(observe.status == 403, "a client may not report authoritative observations: \(observe)")
        let enrollment = try ledger.client.post("/v1/enrollments/S-B/client-events", token: token,
                                                json: #"{"provider":"bankpay","callback":"close","payload":{"type":"close"},"clientEventId":"5b7c2a4e-3f1d-4c8a-9e2b-5d6f7a8b9c0d"}"#)
        #expect(enrollment.status == 403, "\(enrollment)")

        #expect(try ledger.count("SELECT count(*) AS n FROM ledger.events WHERE stream = 'order-S-B'") == 1, "nothing reached B")
        #expect(try ledger.order("S-A")["status"]?.int64Value == 1, "A client signal never moves the status")
    }

    @Test("a client token stops working when its ttl runs out")
    func expires() async throws {
        let (token, expiresAt) = try mintWithExpiry("S-A", ttl: 3)
        let fresh = try ledger.client.post("/v1/orders/S-A/client-events", token: token, json: signal(3))
        #expect(fresh.status == 201, "\(fresh)")
        let wait = Double(expiresAt.microseconds - Timestamp.now().microseconds) / 1e6 + 1.0
        try await Task.sleep(nanoseconds: UInt64(max(0, wait) * 1e9))
        let late = try ledger.client.post("/v1/orders/S-A/client-events", token: token, json: signal(4))
        #expect(late.status == 401 && late.isProblem, "\(late)")
    }

    private func enrollmentCallback(_ id: Int) -> String {
        #"{"provider":"bankpay","callback":"onSuccess","payload":{"type":"bankAccountAdded","data":{"intent_id":"in_\#(id)"}},"clientEventId":"6b7c2a4e-3f1d-4c8a-9e2b-5d6f7a8b9c\#(String(format: "%02d", id))"}"#
    }

    @Test("an order's client token cannot relay the enrollment of the same name; one minted for an enrollment relays only that enrollment")
    func enrollmentScope() throws {
        let orderToken = try mint("S-A")
        let sameName = try ledger.client.post("/v1/enrollments/S-A/client-events", token: orderToken, json: enrollmentCallback(1))
        #expect(sameName.status == 403 && sameName.isProblem, "an order token is not an enrollment token: \(sameName)")

        // An enrollment need not exist before its token: its first callback starts it.
        let minted = try ledger.client.post("/v1/enrollments/ENR-7/client-tokens", token: ledger.ingest, json: #"{"ttlSeconds":600}"#)
        #expect(minted.status == 201, "\(minted)")
        let token = try #require(minted["token"]?.stringValue)
        let expires = try #require(minted["expiresAt"]?.stringValue.flatMap { Timestamp.parse($0) })
        #expect(abs(expires.seconds - Timestamp.now().seconds - 600) <= 5, "ttlSeconds: \(minted)")

        let own = try ledger.client.post("/v1/enrollments/ENR-7/client-events", token: token, json: enrollmentCallback(2))
        #expect(own.status == 201, "\(own)")
        let other = try ledger.client.post("/v1/enrollments/ENR-8/client-events", token: token, json: enrollmentCallback(3))
        #expect(other.status == 403 && other.isProblem, "\(other)")
        let order = try ledger.client.post("/v1/orders/ENR-7/client-events", token: token, json: signal(5))
        #expect(order.status == 403 && order.isProblem, "an enrollment token reaches no order, even one of the same name: \(order)")
        for target in ["/v1/orders/S-A", "/v1/orders"] {
            #expect(try ledger.client.get(target, token: token).status == 403, "GET \(target)")
        }
        let remint = try ledger.client.post("/v1/enrollments/ENR-7/client-tokens", token: token, json: "{}")
        #expect(remint.status == 403, "a client token cannot mint more: \(remint)")
        for bad in ["/v1/enrollments/not%20valid/client-tokens"] {
            let reply = try ledger.client.post(bad, token: ledger.ingest, json: "{}")
            #expect(reply.status == 400 && reply.isProblem, "\(bad) → \(reply)")
        }
        let tooLong = try ledger.client.post("/v1/enrollments/ENR-7/client-tokens", token: ledger.ingest, json: #"{"ttlSeconds":3601}"#)
        #expect(tooLong.status == 400 && tooLong.isProblem, "\(tooLong)")

        #expect(try ledger.count("SELECT count(*) AS n FROM ledger.events WHERE stream LIKE 'enrollment-%'") == 1, "only ENR-7's callback")
        let listed = try ledger.query("SELECT enrollment_ref, order_no FROM ledger.tokens WHERE role = 'client' AND enrollment_ref IS NOT NULL")
        #expect(listed.count == 1)
        let orderNo = try listed.value(0, "order_no"), ref = try listed.value(0, "enrollment_ref")
        #expect(orderNo == nil && ref == "ENR-7")
    }
}
