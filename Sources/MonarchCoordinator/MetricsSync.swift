import Metrics

/// Brings swift-metrics counters and gauges up to the coordinator's own totals when metrics
/// are read: a counter grows by what its total grew since the last read, a gauge takes the
/// value now. So the request path keeps one set of counts, and metrics cost nothing until
/// scraped. Loop thread only.
final class MetricsSync: @unchecked Sendable {
    private var counters: [String: Counter] = [:]
    private var meters: [String: Meter] = [:]
    private var synced: [String: Int] = [:]

    /// Moves the counter `name{labels}` up to `total` (a total that went down, as after a
    /// worker restarted, adds nothing until it passes the last value).
    func count(_ name: String, _ labels: [(String, String)] = [], total: Int) {
        let key = Self.key(name, labels)
        let counter = counters[key] ?? {
            let made = Counter(label: name, dimensions: labels)
            counters[key] = made
            return made
        }()
        let previous = synced[key] ?? 0
        if total > previous { counter.increment(by: total - previous) }
        synced[key] = max(previous, total)
    }

    /// Sets the gauge `name{labels}` to `value`.
    func gauge(_ name: String, _ labels: [(String, String)], _ value: Int) {
        let key = Self.key(name, labels)
        let meter = meters[key] ?? {
            let made = Meter(label: name, dimensions: labels)
            meters[key] = made
            return made
        }()
        meter.set(Double(value))
    }

    private static func key(_ name: String, _ labels: [(String, String)]) -> String {
        ([name] + labels.map { "\($0.0)=\($0.1)" }).joined(separator: "\u{1}")
    }
}
