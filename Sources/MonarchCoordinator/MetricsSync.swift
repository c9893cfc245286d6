import Metrics
import Synchronization

/// Brings swift-metrics counters and gauges up to the coordinator's own totals when metrics
/// are read: a counter grows by what its total grew since the last read, a gauge takes the
/// value now. So the request path keeps one set of counts, and metrics cost nothing until
/// scraped. Safe from any thread.
final class MetricsSync: Sendable {
    /// The metrics made so far and the totals they were brought to.
    private struct State {
        var counters: [String: Counter] = [:]
        var meters: [String: Meter] = [:]
        var synced: [String: Int] = [:]
    }

    private let state = Mutex(State())

    /// Moves the counter `name{labels}` up to `total` (a total that went down, as after a
    /// worker restarted, adds nothing until it passes the last value).
    func count(_ name: String, _ labels: [(String, String)] = [], total: Int) {
        let key = Self.key(name, labels)
        state.withLock { state in
            let counter = state.counters[key] ?? {
                let made = Counter(label: name, dimensions: labels)
                state.counters[key] = made
                return made
            }()
            let previous = state.synced[key] ?? 0
            if total > previous { counter.increment(by: total - previous) }
            state.synced[key] = max(previous, total)
        }
    }

    /// Sets the gauge `name{labels}` to `value`.
    func gauge(_ name: String, _ labels: [(String, String)], _ value: Int) {
        let key = Self.key(name, labels)
        state.withLock { state in
            let meter = state.meters[key] ?? {
                let made = Meter(label: name, dimensions: labels)
                state.meters[key] = made
                return made
            }()
            meter.set(Double(value))
        }
    }

    private static func key(_ name: String, _ labels: [(String, String)]) -> String {
        ([name] + labels.map { "\($0.0)=\($0.1)" }).joined(separator: "\u{1}")
    }
}
