import LedgerCore
import LedgerPostgres

/// Where one group-commit batch spends its time, with no other load: the
/// answer to "what limits the append rate". Three timings of a batch of
/// `batch` new events, each the mean of `repeats` rounds:
/// - through a GroupCommitter (one request carrying the whole batch, so the
///   writer commits it as one batch), end to end;
/// - through the writer's path alone (BEGIN, EventStore.append(prepared:):
///   ledger.append_prepare, the hash chain in Swift, COPY; then COMMIT), split
///   into the calling thread's CPU and the rest (PostgreSQL and the wire);
/// - the same through `ledger.append_events`, the SQL reference path
///   (EventStore.append(encoded:)), for comparison.
struct AppendProfile {
    var databaseURL: String
    var batch: Int
    var repeats: Int

    func run() throws -> Report {
        let run = EventSample.hex(UInt64.random(in: 0...UInt64(UInt32.max)), width: 8)
        var report = Report(phase: "append-profile")
        report["batch"] = String(batch)
        try profileCommitter(run: run, into: &report)
        try profileFunction(run: run, into: &report)
        return report
    }

    private func profileCommitter(run: String, into report: inout Report) throws {
        let pool = ConnectionPool(configuration: DatabaseConfiguration(connectionString: databaseURL, poolSize: 2))
        defer { pool.close() }
        let committer = GroupCommitter(pool: pool, projector: nil, maxBatch: max(batch, 1000))
        defer { committer.shutdown() }
        var total = 0.0, encode = 0.0
        var before = committer.stats
        for r in 0...repeats {   // round 0 warms up and is not counted
            let events = (0..<batch).map { EventSample.newEvent(run: run, thread: 10_000 + r, n: $0) }
            let t0 = MonotonicClock.now()
            let outcomes = try committer.append(events, timeout: 60)
            let t1 = MonotonicClock.now()
            guard outcomes.count == batch, outcomes.allSatisfy({ if case .appended = $0 { true } else { false } }) else {
                throw UsageError("the committer did not append the whole batch")
            }
            if r == 0 { before = committer.stats; continue }
            total += MonotonicClock.seconds(t1 - t0)
            // What `submit` spends preparing the items on the caller's thread, included above.
            let e0 = MonotonicClock.now()
            _ = events.map(PreparedEvent.init)
            encode += MonotonicClock.seconds(MonotonicClock.now() - e0)
        }
        let after = committer.stats
        let perBatch = total / Double(repeats)
        report["committer_batch_ms"] = Report.format(perBatch * 1000)
        report["submit_encode_ms"] = Report.format(encode / Double(repeats) * 1000)
        report["committer_us_per_event"] = Report.format(perBatch / Double(batch) * 1e6)
        report["committer_ceiling_events_per_s"] = Report.format(Double(batch) / perBatch)
        report["committer_batches"] = "\(after.batches - before.batches)"
    }

    private func profileFunction(run: String, into report: inout Report) throws {
        let store = EventStore()
        try profilePath(run: run, prefix: "chain", threadBase: 20_000, into: &report,
                        prepare: { PreparedEvent($0) }, append: { try store.append(prepared: $0, on: $1) })
        try profilePath(run: run, prefix: "function", threadBase: 30_000, into: &report,
                        prepare: { EventStore.itemJSON($0) }, append: { try store.append(encoded: $0, on: $1) })
    }

    /// Times BEGIN, one append of a prepared batch, COMMIT on one connection.
    private func profilePath<Item>(run: String, prefix: String, threadBase: Int, into report: inout Report,
                                   prepare: (NewEvent) -> Item,
                                   append: ([Item], PostgresConnection) throws -> [AppendOutcome]) throws {
        let connection = try PostgresConnection(connectionString: databaseURL)
        defer { connection.close() }
        var begin = 0.0, appendTime = 0.0, commit = 0.0, appendCPU = 0.0
        for r in 0...repeats {
            // Submitters prepare their events on their own threads; the writer gets them prepared.
            let items = (0..<batch).map { prepare(EventSample.newEvent(run: run, thread: threadBase + r, n: $0)) }
            let t1 = MonotonicClock.now()
            _ = try connection.query("BEGIN")
            let t2 = MonotonicClock.now()
            let cpu0 = MonotonicClock.threadCPU()
            let outcomes = try append(items, connection)
            let cpu1 = MonotonicClock.threadCPU()
            let t3 = MonotonicClock.now()
            _ = try connection.query("COMMIT")
            let t4 = MonotonicClock.now()
            guard outcomes.count == batch else { throw UsageError("append answered \(outcomes.count) outcomes") }
            if r == 0 { continue }
            begin += MonotonicClock.seconds(t2 - t1)
            appendTime += MonotonicClock.seconds(t3 - t2)
            commit += MonotonicClock.seconds(t4 - t3)
            appendCPU += MonotonicClock.seconds(cpu1 - cpu0)
        }
        let n = Double(repeats)
        report["\(prefix)_append_ms"] = Report.format(appendTime / n * 1000)
        report["\(prefix)_us_per_event"] = Report.format(appendTime / n / Double(batch) * 1e6)
        report["\(prefix)_client_cpu_us_per_event"] = Report.format(appendCPU / n / Double(batch) * 1e6)
        report["\(prefix)_commit_ms"] = Report.format(commit / n * 1000)
        report["\(prefix)_ceiling_events_per_s"] = Report.format(Double(batch) / ((begin + appendTime + commit) / n))
    }
}
