import Synchronization

/// A small Prometheus registry: counters, gauges and fixed-bucket histograms with labels,
/// rendered in the text exposition format (version 0.0.4). Thread-safe.
public final class MetricsRegistry: Sendable {
    /// The Content-Type to serve `render()` with.
    public static let contentType = "text/plain; version=0.0.4; charset=utf-8"

    private let families = Mutex<[MetricFamily]>([])
    private let collectors = Mutex<[@Sendable () -> Void]>([])

    public init() {}

    /// Registers (or returns the already registered) counter `name`.
    public func counter(_ name: String, help: String, labels: [String] = []) -> Counter {
        Counter(family(name, help: help, kind: .counter, labels: labels, buckets: []))
    }

    /// Registers (or returns the already registered) gauge `name`.
    public func gauge(_ name: String, help: String, labels: [String] = []) -> Gauge {
        Gauge(family(name, help: help, kind: .gauge, labels: labels, buckets: []))
    }

    /// Registers (or returns the already registered) histogram `name` with upper bounds `buckets`.
    public func histogram(
        _ name: String, help: String, labels: [String] = [],
        buckets: [Double] = Histogram.defaultBuckets
    ) -> Histogram {
        let bounds = Array(Set(buckets.filter { $0.isFinite })).sorted()
        return Histogram(family(name, help: help, kind: .histogram, labels: labels, buckets: bounds))
    }

    /// Adds a closure run before every render, to refresh gauges that are sampled (pool sizes...).
    /// How many collectors run on each scrape (registered once each, at startup).
    public var collectorCount: Int { collectors.withLock { $0.count } }

    public func addCollector(_ collect: @escaping @Sendable () -> Void) {
        collectors.withLock { $0.append(collect) }
    }

    /// The whole registry in Prometheus text format.
    public func render() -> String {
        for collect in collectors.withLock({ $0 }) { collect() }
        var out = ""
        for family in families.withLock({ $0 }) { family.render(into: &out) }
        return out
    }

    private func family(_ name: String, help: String, kind: MetricFamily.Kind, labels: [String], buckets: [Double]) -> MetricFamily {
        families.withLock { all in
            if let existing = all.first(where: { $0.name == name }) { return existing }
            let created = MetricFamily(name: name, help: help, kind: kind, labelNames: labels, buckets: buckets)
            all.append(created)
            return created
        }
    }
}

/// A monotonically increasing value per label set.
public struct Counter: Sendable {
    fileprivate let family: MetricFamily
    fileprivate init(_ family: MetricFamily) { self.family = family }

    /// Adds `amount` (ignored unless positive) to the series with these label values, in declared order.
    public func increment(by amount: Double = 1, _ labelValues: String...) {
        guard amount > 0 else { return }
        family.update(labelValues) { $0.value += amount }
    }

    /// The current value of one series (for tests).
    public func value(_ labelValues: String...) -> Double { family.read(labelValues).value }
}

/// A value that goes up and down per label set.
public struct Gauge: Sendable {
    fileprivate let family: MetricFamily
    fileprivate init(_ family: MetricFamily) { self.family = family }

    public func set(_ value: Double, _ labelValues: String...) { family.update(labelValues) { $0.value = value } }
    public func increment(by amount: Double = 1, _ labelValues: String...) { family.update(labelValues) { $0.value += amount } }
    public func decrement(by amount: Double = 1, _ labelValues: String...) { family.update(labelValues) { $0.value -= amount } }
    public func value(_ labelValues: String...) -> Double { family.read(labelValues).value }
}

/// Observations counted into fixed cumulative buckets, with their sum and count.
public struct Histogram: Sendable {
    /// Prometheus' default latency buckets, in seconds.
    public static let defaultBuckets: [Double] = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10]

    fileprivate let family: MetricFamily
    fileprivate init(_ family: MetricFamily) { self.family = family }

    public func observe(_ value: Double, _ labelValues: String...) {
        let bounds = family.buckets
        family.update(labelValues) { series in
            if series.buckets.isEmpty { series.buckets = Array(repeating: 0, count: bounds.count) }
            if let index = bounds.firstIndex(where: { value <= $0 }) { series.buckets[index] += 1 }
            series.count += 1
            series.value += value
        }
    }

    /// The number of observations of one series (for tests).
    public func count(_ labelValues: String...) -> UInt64 { family.read(labelValues).count }
}

private struct Series: Sendable {
    var value: Double = 0
    var count: UInt64 = 0
    var buckets: [UInt64] = []
}

private final class MetricFamily: Sendable {
    enum Kind: String, Sendable { case counter, gauge, histogram }

    let name: String
    let help: String
    let kind: Kind
    let labelNames: [String]
    let buckets: [Double]
    private let series = Mutex<[[String]: Series]>([:])

    init(name: String, help: String, kind: Kind, labelNames: [String], buckets: [Double]) {
        self.name = name
        self.help = help
        self.kind = kind
        self.labelNames = labelNames
        self.buckets = buckets
    }

    /// Label values are padded or cut to the declared names, so a caller slip never traps.
    private func key(_ values: [String]) -> [String] {
        if values.count == labelNames.count { return values }
        var fixed = Array(values.prefix(labelNames.count))
        while fixed.count < labelNames.count { fixed.append("") }
        return fixed
    }

    func update(_ values: [String], _ body: (inout Series) -> Void) {
        let key = key(values)
        series.withLock { all in body(&all[key, default: Series()]) }
    }

    func read(_ values: [String]) -> Series {
        let key = key(values)
        return series.withLock { $0[key] } ?? Series()
    }

    func render(into out: inout String) {
        let snapshot = series.withLock { $0 }.sorted { $0.key.lexicographicallyPrecedes($1.key) }
        out += "# HELP \(name) \(MetricFamily.escapeHelp(help))\n"
        out += "# TYPE \(name) \(kind.rawValue)\n"
        for (values, series) in snapshot {
            let pairs = zip(labelNames, values).map { "\($0)=\"\(MetricFamily.escapeLabel($1))\"" }
            switch kind {
            case .counter, .gauge:
                out += name + MetricFamily.braces(pairs) + " " + MetricFamily.format(series.value) + "\n"
            case .histogram:
                var cumulative: UInt64 = 0
                for (index, bound) in buckets.enumerated() {
                    cumulative += index < series.buckets.count ? series.buckets[index] : 0
                    out += name + "_bucket" + MetricFamily.braces(pairs + ["le=\"\(MetricFamily.format(bound))\""])
                        + " \(cumulative)\n"
                }
                out += name + "_bucket" + MetricFamily.braces(pairs + ["le=\"+Inf\""]) + " \(series.count)\n"
                out += name + "_sum" + MetricFamily.braces(pairs) + " " + MetricFamily.format(series.value) + "\n"
                out += name + "_count" + MetricFamily.braces(pairs) + " \(series.count)\n"
            }
        }
    }

    static func braces(_ pairs: [String]) -> String {
        pairs.isEmpty ? "" : "{" + pairs.joined(separator: ",") + "}"
    }

    static func format(_ value: Double) -> String {
        if value.isNaN { return "NaN" }
        if value.isInfinite { return value > 0 ? "+Inf" : "-Inf" }
        if value == value.rounded(), abs(value) < 1e15 { return String(Int64(value)) }
        return String(value)
    }

    static func escapeLabel(_ value: String) -> String {
        var out = ""
        for character in value {
            switch character {
            case "\\": out += "\\\\"
            case "\"": out += "\\\""
            case "\n": out += "\\n"
            default: out.append(character)
            }
        }
        return out
    }

    static func escapeHelp(_ value: String) -> String {
        var out = ""
        for character in value {
            switch character {
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            default: out.append(character)
            }
        }
        return out
    }
}
