/// Latencies of one thread's operations, kept in microseconds. Each load
/// thread owns its own recorder (no locking on the hot path); the runner
/// merges them once the threads are done.
struct LatencyRecorder: Sendable {
    private(set) var samples: [UInt32] = []

    init(expected: Int = 4096) { samples.reserveCapacity(expected) }

    mutating func record(nanoseconds: UInt64) {
        samples.append(UInt32(min(nanoseconds / 1_000, UInt64(UInt32.max))))
    }

    /// Percentiles over every sample of every recorder.
    static func summarize(_ recorders: [LatencyRecorder]) -> LatencySummary {
        var all: [UInt32] = []
        all.reserveCapacity(recorders.reduce(0) { $0 + $1.samples.count })
        for r in recorders { all.append(contentsOf: r.samples) }
        guard !all.isEmpty else { return LatencySummary() }
        all.sort()
        func at(_ q: Double) -> Double {
            let index = min(all.count - 1, Int((q * Double(all.count)).rounded(.up)) - 1)
            return Double(all[max(0, index)]) / 1_000
        }
        let sum = all.reduce(0.0) { $0 + Double($1) }
        return LatencySummary(count: all.count, meanMs: sum / Double(all.count) / 1_000,
                              p50Ms: at(0.50), p90Ms: at(0.90), p99Ms: at(0.99),
                              maxMs: Double(all[all.count - 1]) / 1_000)
    }
}

/// Latency percentiles in milliseconds.
struct LatencySummary: Sendable {
    var count = 0
    var meanMs = 0.0
    var p50Ms = 0.0
    var p90Ms = 0.0
    var p99Ms = 0.0
    var maxMs = 0.0
}
