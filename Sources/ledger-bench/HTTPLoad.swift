import Foundation
import LedgerCore
import Synchronization

/// Issue 4's load: signed web3 webhooks (each a new event, acknowledged only
/// after commit) and GET /v1/orders/{no}, over C keep-alive connections, one
/// thread each, on loopback.
struct HTTPTarget: Sendable {
    var host: String
    var port: UInt16

    /// Parses "http://127.0.0.1:8080" (loopback IPv4 only: this is a local benchmark).
    init(url: String) throws {
        guard url.hasPrefix("http://") else { throw UsageError("--url must start with http://") }
        let rest = url.dropFirst("http://".count).split(separator: "/", maxSplits: 1).first ?? ""
        let parts = rest.split(separator: ":")
        guard parts.count == 2, let port = UInt16(parts[1]) else { throw UsageError("--url must be http://HOST:PORT") }
        host = String(parts[0])
        self.port = port
        guard host.hasPrefix("127.") else { throw UsageError("the load generator only targets loopback (127.x.x.x)") }
    }

    func requestHead(_ method: String, _ path: String, _ headers: [(String, String)], bodyLength: Int?) -> [UInt8] {
        var text = "\(method) \(path) HTTP/1.1\r\nHost: \(host):\(port)\r\n"
        for (name, value) in headers { text += "\(name): \(value)\r\n" }
        if let bodyLength { text += "Content-Length: \(bodyLength)\r\n" }
        text += "\r\n"
        return Array(text.utf8)
    }
}

enum HTTPLoad {
    struct Options {
        var target: HTTPTarget
        var connections: Int
        var seconds: Double
        var maxRequests: Int?
        var serverPID: Int32?
    }

    /// POST /v1/webhooks/web3, a fresh signed body (a new order) every request.
    /// Writes the acknowledged order numbers to `ordersFile` for the reads phase.
    static func webhooks(_ o: Options, key: String, ordersFile: String?) -> Report {
        let run = EventSample.hex(UInt64.random(in: 0...UInt64(UInt32.max)), width: 8)
        print("webhooks: \(o.connections) connections, \(o.seconds) s, run \(run)")
        let acknowledged = OrderCollector()
        let sampler = o.serverPID.map { RSSSampler(pid: $0) }
        let result = LoadRunner.run(LoadPlan(threads: o.connections, seconds: o.seconds, maxOperations: o.maxRequests)) { index in
            try WebhookWorker(target: o.target, key: key, run: run, connection: index, acknowledged: acknowledged)
        }
        var report = Report(phase: "webhooks")
        report.add(result)
        report["connections"] = String(o.connections)
        addRSS(sampler, to: &report)
        if let ordersFile {
            let orders = acknowledged.orders.withLock { $0 }
            try? (orders.joined(separator: "\n") + "\n").write(toFile: ordersFile, atomically: true, encoding: .utf8)
            report["orders_written"] = String(orders.count)
        }
        return report
    }

    /// GET /v1/orders/{no} over `orders`, round robin from a per-connection offset.
    static func reads(_ o: Options, token: String, orders: [String]) -> Report {
        print("reads: \(o.connections) connections, \(o.seconds) s, \(orders.count) orders")
        // Requests are prepared once, up front: the generator should take as little CPU from the server as it can.
        let requests = orders.map {
            o.target.requestHead("GET", "/v1/orders/\($0)", [("Authorization", "Bearer \(token)")], bodyLength: nil)
        }
        let sampler = o.serverPID.map { RSSSampler(pid: $0) }
        let result = LoadRunner.run(LoadPlan(threads: o.connections, seconds: o.seconds, maxOperations: o.maxRequests)) { index in
            try ReadWorker(target: o.target, requests: requests, connection: index)
        }
        var report = Report(phase: "reads")
        report.add(result)
        report["connections"] = String(o.connections)
        addRSS(sampler, to: &report)
        return report
    }

    private static func addRSS(_ sampler: RSSSampler?, to report: inout Report) {
        guard let sampler else { return }
        let rss = sampler.stop()
        report["rss_max_mb"] = Report.format(rss.maxMB)
        report["rss_last_mb"] = Report.format(rss.lastMB)
        report["rss_samples"] = String(rss.samples)
    }
}

/// Order numbers acknowledged by the webhook phase, gathered from every connection.
final class OrderCollector: Sendable {
    let orders = Mutex<[String]>([])
}

/// One keep-alive connection posting signed web3 webhooks, each for a new order.
final class WebhookWorker: LoadWorker {
    private let connection: HTTPConnection
    private let target: HTTPTarget
    private let key: String
    private let run: String
    private let index: Int
    private let acknowledged: OrderCollector
    private var mine: [String] = []

    init(target: HTTPTarget, key: String, run: String, connection index: Int, acknowledged: OrderCollector) throws {
        self.connection = try HTTPConnection(host: target.host, port: target.port)
        self.target = target
        self.key = key
        self.run = run
        self.index = index
        self.acknowledged = acknowledged
    }

    /// Hands over the (bounded) list of acknowledged orders for the reads phase.
    func finish() {
        let sample = mine
        acknowledged.orders.withLock { $0.append(contentsOf: sample) }
    }

    func perform(_ sequence: Int) -> OperationOutcome {
        let order = "B-\(run)-\(index)-\(sequence)"
        let tag = run + EventSample.hex(UInt64(index), width: 4) + EventSample.hex(UInt64(sequence), width: 12)
        let body = Array(EventSample.web3Body(order: order, tag: tag).utf8)
        let timestamp = String(Int64(Date().timeIntervalSince1970))
        let signature = Web3Webhook.signature(key: key, timestamp: timestamp, body: body)
        let request = target.requestHead("POST", "/v1/webhooks/web3", [
            ("Content-Type", "application/json"),
            ("X-Pay-Timestamp", timestamp),
            ("X-Pay-Signature", signature),
        ], bodyLength: body.count) + body
        do {
            let response = try connection.send(request)
            guard response.status == 200 else {
                return .failed("HTTP \(response.status): \(String(decoding: response.body.prefix(160), as: UTF8.self))")
            }
            if mine.count < 2_000 { mine.append(order) }
            return .ok
        } catch {
            return .failed(String(describing: error))
        }
    }
}

/// One keep-alive connection reading orders by number.
final class ReadWorker: LoadWorker {
    private let connection: HTTPConnection
    private let requests: [[UInt8]]
    private let offset: Int

    init(target: HTTPTarget, requests: [[UInt8]], connection index: Int) throws {
        self.connection = try HTTPConnection(host: target.host, port: target.port)
        self.requests = requests
        offset = requests.isEmpty ? 0 : (index * 7919) % requests.count
    }

    func perform(_ sequence: Int) -> OperationOutcome {
        guard !requests.isEmpty else { return .failed("no orders to read") }
        do {
            let response = try connection.send(requests[(offset + sequence) % requests.count])
            guard response.status == 200 else {
                return .failed("HTTP \(response.status): \(String(decoding: response.body.prefix(160), as: UTF8.self))")
            }
            return .ok
        } catch {
            return .failed(String(describing: error))
        }
    }
}
