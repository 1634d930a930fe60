// ledger-bench: the measurements behind Ops/bench. Argument dispatch only;
// each phase lives in its own file.
import Foundation

let usage = """
    usage: ledger-bench COMMAND [options]   (build with -c release)

      core [--repeats 5]                 reducer events/s and web3 webhook verify+map µs (issue 3)
      append   [--database-url URL] [--clients 64] [--seconds 10] [--max-batch 1000] [--callers tasks|threads]
                                         group-commit appends through one GroupCommitter (issue 2);
                                         DATABASE_URL is the default database
      append-profile [--database-url URL] [--batch 250] [--repeats 10]
                                         one batch's time split: making events, BEGIN, append, COMMIT
      webhooks --url http://127.0.0.1:PORT --key K [--connections 64] [--seconds 10]
               [--requests N] [--server-pid PID] [--orders-file FILE]
                                         signed POST /v1/webhooks/web3, a new order each (issue 4)
      webhook-requests --url URL --key K --count N --prefix PATH [--files 2]
               [--orders-file FILE] [--orders-per-file 5000] [--cycle-orders N]
                                         the same requests, signed now and written to PATH.0, PATH.1, ...
                                         (records `<length>\n<request>`) for wrk to send (Ops/bench)
      reads    --url URL --token T --orders-file FILE [--orders N] [--connections 32]
               [--seconds 10] [--requests N] [--server-pid PID]
                                         GET /v1/orders/{no} (issue 4)
      mix-requests --url URL --key K --token T --orders N --prefix PATH [--files 2] [--spread 1000]
                                         http_ingest_mix's requests (6 an order: register, webhooks 1-3,
                                         client event, GET), written to PATH.0, PATH.1, ... for wrk
      fill     --database-url URL --events N [--threads 2] [--key K] [--layout grouped|phased] [--events-per-order 2-5]
                                         N events in real order streams (5 an order, made by the core),
                                         appended in large batches, no read models (then `ledger rebuild`);
                                         phased: every order's first event, then every order's second, ...
      pgbench-scripts --dir DIR [--orders 10000]
                                         write setup.sql, insert.sql and select.sql for the pgbench baselines

    Each command ends with one line `RESULT phase=NAME key=value ...`.
    """

func runCommand(_ arguments: [String]) throws {
    guard let command = arguments.first else { throw UsageError("no command") }
    let rest = arguments.dropFirst()
    switch command {
    case "core":
        let o = try Options(rest, allowed: ["repeats"])
        CoreBenchmark.run(repeats: try o.int("repeats", default: 5, range: 1...100)).print()
    case "append":
        let o = try Options(rest, allowed: ["database-url", "clients", "seconds", "max-batch", "callers"])
        guard let url = o.string("database-url") ?? ProcessInfo.processInfo.environment["DATABASE_URL"] else {
            throw UsageError("give --database-url or DATABASE_URL")
        }
        var benchmark = AppendBenchmark(databaseURL: url, clients: try o.int("clients", default: 64, range: 1...4096),
                                        seconds: try o.seconds("seconds", default: 10),
                                        maxBatch: try o.int("max-batch", default: 1000, range: 1...100_000))
        if let callers = o.string("callers") {
            guard let kind = AppendBenchmark.Callers(rawValue: callers) else { throw UsageError("--callers is tasks or threads") }
            benchmark.callers = kind
        }
        try benchmark.run().print()
    case "append-profile":
        let o = try Options(rest, allowed: ["database-url", "batch", "repeats"])
        guard let url = o.string("database-url") ?? ProcessInfo.processInfo.environment["DATABASE_URL"] else {
            throw UsageError("give --database-url or DATABASE_URL")
        }
        try AppendProfile(databaseURL: url, batch: try o.int("batch", default: 250, range: 1...100_000),
                          repeats: try o.int("repeats", default: 10, range: 1...1000)).run().print()
    case "webhooks":
        let o = try Options(rest, allowed: ["url", "key", "connections", "seconds", "requests", "server-pid", "orders-file"])
        let options = try httpOptions(o, defaultConnections: 64)
        HTTPLoad.webhooks(options, key: try o.required("key"), ordersFile: o.string("orders-file")).print()
    case "webhook-requests":
        let o = try Options(rest, allowed: ["url", "key", "count", "prefix", "files", "orders-file", "orders-per-file",
                                            "cycle-orders"])
        try WebhookRequestFiles(target: try HTTPTarget(url: try o.required("url")), key: try o.required("key"),
                                count: try o.int("count", default: 100_000, range: 1...10_000_000),
                                files: try o.int("files", default: 2, range: 1...64), prefix: try o.required("prefix"),
                                ordersFile: o.string("orders-file"),
                                ordersPerFile: try o.int("orders-per-file", default: 5_000, range: 0...10_000_000),
                                ordersPerFileCycle: try o.optionalInt("cycle-orders"))
            .write().print()
    case "reads":
        let o = try Options(rest, allowed: ["url", "token", "orders-file", "orders", "connections", "seconds", "requests", "server-pid"])
        let options = try httpOptions(o, defaultConnections: 32)
        let text = try String(contentsOfFile: try o.required("orders-file"), encoding: .utf8)
        var orders = text.split(separator: "\n").map(String.init).filter { !$0.isEmpty }
        if let limit = try o.optionalInt("orders") { orders = Array(orders.prefix(limit)) }
        guard !orders.isEmpty else { throw UsageError("no order numbers in --orders-file") }
        HTTPLoad.reads(options, token: try o.required("token"), orders: orders).print()
    case "mix-requests":
        let o = try Options(rest, allowed: ["url", "key", "token", "orders", "prefix", "files", "spread"])
        try MixRequestFiles(target: try HTTPTarget(url: try o.required("url")), key: try o.required("key"),
                            token: try o.required("token"), orders: try o.int("orders", default: 10_000, range: 1...10_000_000),
                            files: try o.int("files", default: 2, range: 1...64), prefix: try o.required("prefix"),
                            spread: try o.int("spread", default: 1000, range: 1...1_000_000))
            .write().print()
    case "fill":
        let o = try Options(rest, allowed: ["database-url", "events", "threads", "key", "layout", "events-per-order"])
        guard let layout = ScaleFill.Layout(rawValue: o.string("layout") ?? "grouped") else {
            throw UsageError("--layout is grouped or phased")
        }
        try ScaleFill(databaseURL: try o.required("database-url"),
                      events: try o.int("events", default: 1_000_000, range: 1...100_000_000),
                      threads: try o.int("threads", default: 2, range: 1...64), key: o.string("key"), layout: layout,
                      eventsPerOrder: try o.int("events-per-order", default: ScaleFill.allEvents, range: 2...ScaleFill.allEvents)).run().print()
    case "pgbench-scripts":
        let o = try Options(rest, allowed: ["dir", "orders"])
        try PgbenchScripts.write(to: try o.required("dir"), orders: try o.int("orders", default: 10_000))
    case "-h", "--help", "help":
        print(usage)
    default:
        throw UsageError("unknown command \(command)")
    }
}

func httpOptions(_ o: Options, defaultConnections: Int) throws -> HTTPLoad.Options {
    HTTPLoad.Options(target: try HTTPTarget(url: try o.required("url")),
                     connections: try o.int("connections", default: defaultConnections, range: 1...4096),
                     seconds: try o.seconds("seconds", default: 10),
                     maxRequests: try o.optionalInt("requests"),
                     serverPID: try o.optionalInt("server-pid").map { Int32($0) })
}

do {
    try runCommand(Array(CommandLine.arguments.dropFirst()))
} catch let error as UsageError {
    FileHandle.standardError.write(Data("ledger-bench: \(error)\n\n\(usage)\n".utf8))
    exit(2)
} catch {
    FileHandle.standardError.write(Data("ledger-bench: \(error)\n".utf8))
    exit(1)
}
