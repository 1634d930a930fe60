import LedgerCore

/// Issue 3's figures: the reducer's fold rate and one web3 webhook's
/// verify-and-map time, each the median of a few runs on one thread.
enum CoreBenchmark {
    static func run(repeats: Int = 5) -> Report {
        _ = CoreBenchmarks.reducerEventsPerSecond(events: 200_000)  // warm up
        let folds = (0..<repeats).map { _ in CoreBenchmarks.reducerEventsPerSecond(events: 2_000_000) }.sorted()
        _ = CoreBenchmarks.web3WebhookMicroseconds(iterations: 10_000)
        let webhooks = (0..<repeats).map { _ in CoreBenchmarks.web3WebhookMicroseconds(iterations: 100_000) }.sorted()
        var report = Report(phase: "core")
        report["reducer_events_per_s"] = Report.format(folds[folds.count / 2])
        report["reducer_best"] = Report.format(folds[folds.count - 1])
        report["webhook_us"] = Report.format(webhooks[webhooks.count / 2])
        report["webhook_best_us"] = Report.format(webhooks[0])
        return report
    }
}
