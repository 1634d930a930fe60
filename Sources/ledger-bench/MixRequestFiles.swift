import Foundation
import LedgerCore

/// The requests of `http_ingest_mix`, written ahead as `WebhookRequestFiles` writes
/// webhooks (records `<length>\n<raw request>`, one file a wrk thread). For every
/// order, six requests: `POST /v1/orders`, signed web3 webhooks for statuses 1, 2
/// and 3, one client event, and `GET /v1/orders/{no}` (the ingest token for the
/// API calls). An order's steps are `spread` orders apart in the file, so each is
/// sent well after the one before it was answered (wrk keeps at most its
/// connections' worth in flight), and the load is an even mix of the six kinds.
struct MixRequestFiles {
    var target: HTTPTarget
    var key: String
    var token: String
    /// Orders in each file.
    var orders: Int
    var files: Int
    var prefix: String
    var spread: Int

    static let steps = 6

    static func registrationBody(order: String, providerOrderNo: String) -> String {
        #"{"merchantOrderNo":"\#(order)","provider":"web3","amount":"40.00","asset":"USDT","chainId":"1","tokenId":"1","#
            + #""providerOrderId":"\#(providerOrderNo)"}"#
    }

    static func clientEventBody(id: String) -> String {
        #"{"provider":"web3","callback":"close","payload":{},"clientEventId":"\#(id)"}"#
    }

    /// A UUID made of the run and the order's number, unique per order.
    static func uuid(run: String, n: Int) -> String {
        let hex = run + EventSample.hex(UInt64(n), width: 32 - run.count)   // 32 hex digits
        let c = Array(hex)
        return String(c[0..<8]) + "-" + String(c[8..<12]) + "-4" + String(c[13..<16]) + "-8" + String(c[17..<20]) + "-"
            + String(c[20..<32])
    }

    func write() throws -> Report {
        let run = EventSample.hex(UInt64.random(in: 0...UInt64(UInt32.max)), width: 8)
        let timestamp = String(Int64(Date().timeIntervalSince1970))
        var bytes = 0
        for file in 0..<files {
            var out: [UInt8] = []
            out.reserveCapacity(orders * Self.steps * 600)
            // Round t sends step s of order t - s * spread.
            for t in 0..<(orders + (Self.steps - 1) * spread) {
                for step in 0..<Self.steps {
                    let n = t - step * spread
                    guard n >= 0, n < orders else { continue }
                    let request = self.request(step: step, run: run, file: file, n: n, timestamp: timestamp)
                    out.append(contentsOf: Array("\(request.count)\n".utf8))
                    out.append(contentsOf: request)
                }
            }
            bytes += out.count
            guard FileManager.default.createFile(atPath: "\(prefix).\(file)", contents: Data(out)) else {
                throw UsageError("cannot write \(prefix).\(file)")
            }
        }
        var report = Report(phase: "mix-requests")
        report["orders"] = String(orders * files)
        report["requests"] = String(orders * files * Self.steps)
        report["bytes"] = String(bytes)
        return report
    }

    private func request(step: Int, run: String, file: Int, n: Int, timestamp: String) -> [UInt8] {
        let order = "M-\(run)-\(file)-\(n)"
        let tag = run + EventSample.hex(UInt64(file), width: 4) + EventSample.hex(UInt64(n), width: 12)
        let providerOrderNo = "P" + tag.prefix(24)
        let auth = ("Authorization", "Bearer \(token)")
        let json = ("Content-Type", "application/json")
        switch step {
        case 0:
            let body = Array(Self.registrationBody(order: order, providerOrderNo: providerOrderNo).utf8)
            return target.requestHead("POST", "/v1/orders", [auth, json], bodyLength: body.count) + body
        case 1, 2, 3:
            let body = Array(EventSample.web3Body(order: order, orderNo: providerOrderNo,
                                                  txHash: "0x" + EventSample.txHex(tag + String(step)), status: step).utf8)
            return target.requestHead("POST", "/v1/webhooks/web3", [
                json, ("X-Pay-Timestamp", timestamp),
                ("X-Pay-Signature", Web3Webhook.signature(key: key, timestamp: timestamp, body: body)),
            ], bodyLength: body.count) + body
        case 4:
            let body = Array(Self.clientEventBody(id: Self.uuid(run: run + EventSample.hex(UInt64(file), width: 4), n: n)).utf8)
            return target.requestHead("POST", "/v1/orders/\(order)/client-events", [auth, json], bodyLength: body.count) + body
        default:
            return target.requestHead("GET", "/v1/orders/\(order)", [auth], bodyLength: nil)
        }
    }
}
