import Foundation
import LedgerCore
import LedgerPostgres
@testable import LedgerService
import LedgerTestSupport
import Synchronization
import Testing

/// Writes events the way the service does: group commit with the read-model projection.
struct TestWrites {
    let pool: ConnectionPool

    func registerAndPay(_ no: String) throws {
        let committer = GroupCommitter(pool: pool, projector: OrderProjection())
        defer { committer.shutdown(); pool.close() }
        let now = Timestamp.now()
        let registration = try OrderRequests.registration(
            body: Array(#"{"merchantOrderNo":"\#(no)","provider":"web3","amount":"40.00","asset":"USDT"}"#.utf8), receivedAt: now)
        let body = Array(#"{"merchantOrderNo":"\#(no)","status":3,"amount":"40.00","txHash":"0x1"}"#.utf8)
        let ts = String(now.seconds)
        let signature = Web3Webhook.signature(key: "k", timestamp: ts, body: body)
        let (_, paid) = try Web3Webhook.ingest(headers: ["x-pay-timestamp": ts, "x-pay-signature": signature],
                                               body: body, keys: ["k"], now: now)
        // As the service records them: the registration by its token, the webhook with its signature headers.
        let signedWith: JSONValue = .object([("X-Pay-Timestamp", .string(ts)), ("X-Pay-Signature", .string(signature))])
        _ = try committer.append([EventMapping.newEvent(.registered(registration), raw: nil,
                                                        receipt: Receipt(requestID: "test", verifiedBy: "token:test"))])
        _ = try committer.append([EventMapping.newEvent(paid, raw: body, receipt: Receipt(requestID: "test", verifiedBy: "signature",
                                                                                          signedWith: signedWith))])
    }

    /// `count` registered orders `P-00000`..., appended in batches through the projection.
    func registrations(_ count: Int) throws {
        let committer = GroupCommitter(pool: pool, projector: OrderProjection())
        defer { committer.shutdown(); pool.close() }
        let now = Timestamp.now()
        let receipt = Receipt(requestID: "test", verifiedBy: "token:test")
        for chunk in stride(from: 0, to: count, by: 500) {
            let events = try (chunk..<min(count, chunk + 500)).map { n in
                let no = "P-" + String(n + 100_000).dropFirst()
                let registration = try OrderRequests.registration(
                    body: Array(#"{"merchantOrderNo":"\#(no)","provider":"web3","amount":"1.00","asset":"USDT"}"#.utf8), receivedAt: now)
                return EventMapping.newEvent(.registered(registration), raw: nil, receipt: receipt)
            }
            _ = try committer.append(events)
        }
    }

    /// A BankPay enrollment callback, through the enrollment read model's projection.
    func enrollment(_ ref: String) throws {
        let committer = GroupCommitter(pool: pool, projector: OrderProjection())
        defer { committer.shutdown(); pool.close() }
        let now = Timestamp.now()
        let signal = try ClientEventRequest.parseEnrollment(enrollmentRef: ref, body: Array(#"""
            {"provider":"bankpay","callback":"close","payload":{"type":"close"},"clientEventId":"7f1c2a4e-3f1d-4c8a-9e2b-5d6f7a8b9c0d"}
            """#.utf8), receivedAt: now)
        let event = LedgerEvent.enrollment(signal)
        _ = try committer.append([EventMapping.newEvent(event, raw: nil, receipt: Receipt(requestID: "test", verifiedBy: "token:test"))],
                                 attachments: [event])
    }

    /// A client signal whose payload is neither in jsonb's key order nor in its number
    /// spelling, appended as the live path does (the parsed event attached).
    func clientSignal(_ no: String) throws {
        let committer = GroupCommitter(pool: pool, projector: OrderProjection())
        defer { committer.shutdown(); pool.close() }
        let now = Timestamp.now()
        let event = LedgerEvent.clientSignal(ClientSignal(
            merchantOrderNo: try MerchantOrderNo(no), provider: "banxa", callback: "banxaDidFail",
            payload: .object([("error", .string("serverError")), ("code", .number("1.0e2"))]),
            clientEventId: "6f1c2a4e-3f1d-4c8a-9e2b-5d6f7a8b9c0d", occurredAt: now, receivedAt: now))
        let new = EventMapping.newEvent(event, raw: nil, receipt: Receipt(requestID: "test", verifiedBy: "token:test"))
        _ = try committer.append([new], attachments: [event])
    }
}
