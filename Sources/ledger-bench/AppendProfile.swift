import LedgerCore
import LedgerPostgres

/// Where one group-commit batch spends its time, timed the way
/// GroupCommitter.commit runs it (BEGIN, EventStore.append(encoded:), COMMIT) on one
/// connection with no other load: the answer to "what limits the append rate".
/// `append` is split into the calling thread's CPU (Swift: joining the
/// batch, parsing the answer) and the rest (PostgreSQL and the wire).
struct AppendProfile {
    var databaseURL: String
    var batch: Int
    var repeats: Int

    func run() throws -> Report {
        let connection = try PostgresConnection(connectionString: databaseURL)
        defer { connection.close() }
        let store = EventStore()
        let run = EventSample.hex(UInt64.random(in: 0...UInt64(UInt32.max)), width: 8)
        var make = 0.0, begin = 0.0, append = 0.0, commit = 0.0, appendCPU = 0.0
        for r in 0...repeats {   // round 0 warms up and is not counted
            let t0 = MonotonicClock.now()
            // Submitters make and encode their events on their own threads; the writer gets them encoded.
            let items = (0..<batch).map { EventStore.itemJSON(EventSample.newEvent(run: run, thread: r, n: $0)) }
            let t1 = MonotonicClock.now()
            _ = try connection.query("BEGIN")
            let t2 = MonotonicClock.now()
            let cpu0 = MonotonicClock.threadCPU()
            let outcomes = try store.append(encoded: items, on: connection)
            let cpu1 = MonotonicClock.threadCPU()
            let t3 = MonotonicClock.now()
            _ = try connection.query("COMMIT")
            let t4 = MonotonicClock.now()
            guard outcomes.count == batch else { throw UsageError("append answered \(outcomes.count) outcomes") }
            if r == 0 { continue }
            make += MonotonicClock.seconds(t1 - t0)
            begin += MonotonicClock.seconds(t2 - t1)
            append += MonotonicClock.seconds(t3 - t2)
            commit += MonotonicClock.seconds(t4 - t3)
            appendCPU += MonotonicClock.seconds(cpu1 - cpu0)
        }
        let n = Double(repeats)
        var report = Report(phase: "append-profile")
        report["batch"] = String(batch)
        report["make_and_encode_ms"] = Report.format(make / n * 1000)
        report["begin_ms"] = Report.format(begin / n * 1000)
        report["append_ms"] = Report.format(append / n * 1000)
        report["commit_ms"] = Report.format(commit / n * 1000)
        // The writer thread's own CPU in EventStore.append (joining the batch, reading the answer).
        report["client_cpu_us_per_event"] = Report.format(appendCPU / n / Double(batch) * 1e6)
        report["append_us_per_event"] = Report.format(append / n / Double(batch) * 1e6)
        report["ceiling_events_per_s"] = Report.format(Double(batch) / ((begin + append + commit) / n))
        return report
    }
}
