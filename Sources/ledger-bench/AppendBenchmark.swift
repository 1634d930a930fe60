import Foundation
import LedgerCore
import LedgerPostgres

/// Issue 2's group-commit benchmark: `clients` callers each append one new
/// event-sized event at a time through ONE GroupCommitter; a call returns
/// only after its batch committed. Callers are Swift tasks (TaskCallers) by
/// default, or OS threads blocking on each call (`threads`).
struct AppendBenchmark {
    enum Callers: String { case tasks, threads }

    var databaseURL: String
    var clients: Int
    var seconds: Double
    var maxBatch: Int
    var callers: Callers = .tasks

    func run() throws -> Report {
        let pool = ConnectionPool(configuration: DatabaseConfiguration(connectionString: databaseURL, poolSize: 2))
        defer { pool.close() }
        let committer = GroupCommitter(pool: pool, projector: nil, maxBatch: maxBatch)
        let run = EventSample.hex(UInt64.random(in: 0...UInt64(UInt32.max)), width: 8)
        let widths = EventSample.payloadWidths()
        guard EventSample.payloadMatchesRenderer() else {
            throw UsageError("the sample payload template does not render what EventSample.payload renders")
        }
        print("append: \(clients) clients (\(callers.rawValue)), \(seconds) s, maxBatch \(maxBatch), run \(run); payload bytes \(widths.template) (the core writes \(widths.core))")

        // Connect and warm the function's plan before timing.
        _ = try committer.append([EventSample.newEvent(run: run, thread: 9999, n: 0)])
        let headBefore = try pool.withConnection { try EventStore().head(on: $0).position }
        let statsBefore = committer.stats

        let began = MonotonicClock.now()
        let result: LoadResult
        switch callers {
        case .tasks:
            result = TaskCallers.run(committer: committer, run: run, callers: clients, seconds: seconds)
        case .threads:
            result = LoadRunner.run(LoadPlan(threads: clients, seconds: seconds)) { thread in
                AppendWorker(committer: committer, run: run, thread: thread)
            }
        }
        let elapsed = MonotonicClock.seconds(MonotonicClock.now() - began)
        committer.shutdown()
        let stats = committer.stats
        let headAfter = try pool.withConnection { try EventStore().head(on: $0).position }

        let batches = stats.batches - statsBefore.batches
        let appended = stats.appended - statsBefore.appended
        var report = Report(phase: "append")
        report.add(result)
        report["clients"] = String(clients)
        report["callers"] = callers.rawValue
        report["max_batch"] = String(maxBatch)
        report["batches"] = String(batches)
        report["avg_batch"] = Report.format(batches > 0 ? Double(appended) / Double(batches) : 0)
        report["commits_per_s"] = Report.format(Double(batches) / elapsed)
        report["failed_batches"] = String(stats.failedBatches - statsBefore.failedBatches)
        // Every acknowledged append is in the log, and nothing else was written.
        report["log_grew"] = String(headAfter - headBefore)
        report["acknowledged"] = String(result.totalOK)
        if headAfter - headBefore != Int64(result.totalOK) {
            print("warning: the log grew by \(headAfter - headBefore) events for \(result.totalOK) acknowledged appends (other writers?)")
        }
        return report
    }
}

/// One client thread: appends a new event and waits for its commit.
final class AppendWorker: LoadWorker {
    private let committer: GroupCommitter
    private let run: String
    private let thread: Int

    init(committer: GroupCommitter, run: String, thread: Int) {
        self.committer = committer
        self.run = run
        self.thread = thread
    }

    func perform(_ sequence: Int) -> OperationOutcome {
        let event = EventSample.newEvent(run: run, thread: thread, n: sequence)
        do {
            let outcomes = try committer.append([event], timeout: 30)
            guard case .appended = outcomes.first else { return .failed("not appended: \(String(describing: outcomes.first))") }
            return .ok
        } catch {
            return .failed(String(describing: error))
        }
    }
}
