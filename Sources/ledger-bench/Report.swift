/// A phase's figures as `key=value` pairs. Printed readably, then as one
/// `RESULT phase=... key=value ...` line that Ops/bench parses.
struct Report {
    let phase: String
    private var pairs: [(String, String)] = []

    init(phase: String) { self.phase = phase }

    subscript(key: String) -> String? {
        get { pairs.first { $0.0 == key }?.1 }
        set {
            pairs.removeAll { $0.0 == key }
            if let newValue { pairs.append((key, newValue)) }
        }
    }

    /// The standard load figures: rate, latency, counts, and a few failure messages.
    mutating func add(_ r: LoadResult) {
        self["rate"] = Self.format(r.rate)
        self["ok"] = String(r.ok)
        self["failed"] = String(r.failed)
        self["window_s"] = Self.format(r.windowSeconds)
        self["p50_ms"] = Self.format(r.latency.p50Ms)
        self["p90_ms"] = Self.format(r.latency.p90Ms)
        self["p99_ms"] = Self.format(r.latency.p99Ms)
        self["max_ms"] = Self.format(r.latency.maxMs)
        for (message, count) in r.failures.sorted(by: { $0.value > $1.value }).prefix(5) {
            Swift.print("  failure x\(count): \(message)")
        }
    }

    func print() {
        for (k, v) in pairs { Swift.print("  \(k): \(v)") }
        let line = pairs.map { "\($0.0)=\($0.1)" }.joined(separator: " ")
        Swift.print("RESULT phase=\(phase) \(line)")
    }

    static func format(_ value: Double) -> String {
        if value >= 1000 { return String(Int(value.rounded())) }
        if value >= 10 { return String(Double(Int((value * 10).rounded())) / 10) }
        return String(Double(Int((value * 1000).rounded())) / 1000)
    }
}
