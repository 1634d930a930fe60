import Foundation
import LedgerCore

/// Signed web3 webhook requests written ahead of a run, for wrk to send as
/// they are: the load generator then costs about what pgbench's does (no
/// signing, no formatting while it measures), as for the reads.
///
/// Each file holds records `<length>\n<raw HTTP/1.1 request>`, one file a wrk
/// thread; every request is a new order (a new event), signed with the time
/// of writing (well inside the ledger's signature tolerance for a run of
/// minutes). The first `ordersPerFile` order numbers of each file go to
/// `ordersFile`: they are sent first, so a finished run has stored them.
struct WebhookRequestFiles {
    var target: HTTPTarget
    var key: String
    var count: Int
    var files: Int
    var prefix: String
    var ordersFile: String?
    var ordersPerFile: Int
    /// With a value, requests cycle over this many orders (each file its own), so most
    /// webhooks update an order that exists; each is still a new event (its own txHash).
    var ordersPerFileCycle: Int? = nil

    func write() throws -> Report {
        let run = EventSample.hex(UInt64.random(in: 0...UInt64(UInt32.max)), width: 8)
        let timestamp = String(Int64(Date().timeIntervalSince1970))
        var orders: [String] = []
        var bytes = 0
        for file in 0..<files {
            var out: [UInt8] = []
            out.reserveCapacity(count / files * 700)
            var n = 0
            while n * files + file < count {
                let order = "W-\(run)-\(file)-\(ordersPerFileCycle.map { n % $0 } ?? n)"
                let tag = run + EventSample.hex(UInt64(file), width: 4) + EventSample.hex(UInt64(n), width: 12)
                let body = Array(EventSample.web3Body(order: order, tag: tag).utf8)
                let request = target.requestHead("POST", "/v1/webhooks/web3", [
                    ("Content-Type", "application/json"),
                    ("X-Pay-Timestamp", timestamp),
                    ("X-Pay-Signature", Web3Webhook.signature(key: key, timestamp: timestamp, body: body)),
                ], bodyLength: body.count) + body
                out.append(contentsOf: Array("\(request.count)\n".utf8))
                out.append(contentsOf: request)
                if n < ordersPerFile && n < (ordersPerFileCycle ?? Int.max) { orders.append(order) }
                n += 1
            }
            bytes += out.count
            guard FileManager.default.createFile(atPath: "\(prefix).\(file)", contents: Data(out)) else {
                throw UsageError("cannot write \(prefix).\(file)")
            }
        }
        if let ordersFile {
            try (orders.joined(separator: "\n") + "\n").write(toFile: ordersFile, atomically: true, encoding: .utf8)
        }
        var report = Report(phase: "webhook-requests")
        report["requests"] = String(count)
        report["files"] = String(files)
        report["bytes"] = String(bytes)
        report["orders_written"] = String(orders.count)
        return report
    }
}
