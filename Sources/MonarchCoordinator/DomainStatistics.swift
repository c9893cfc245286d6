import Histogram
import Monarch

/// How one domain's requests fared over the last minute: counts (answers, cache hits, hot tier
/// hits among them) and a latency histogram per ten-second slice, six slices kept
/// (HdrHistogram, microseconds, three significant digits). Slices are cut, and the last
/// minute is found, on the clock it is given.
/// Loop thread only.
struct DomainStatistics {
    /// The length of a slice.
    static let slice: Duration = .seconds(10)
    /// Slices kept: the last minute.
    static let slices = 6

    private struct Slice {
        var start: ContinuousClock.Instant
        var requests = 0
        var hits = 0
        var hotHits = 0
        var latency = Histogram<UInt64>(highestTrackableValue: 3_600_000_000, numberOfSignificantValueDigits: .three)
    }

    private var window: [Slice] = []
    private let clock: MonotonicClock

    /// Statistics whose slices are cut on `clock`.
    init(clock: MonotonicClock) {
        self.clock = clock
    }

    /// Records one answer that took `latency`, now; `hit` when a cache gave it, `hot` when
    /// that was the coordinator's hot tier.
    mutating func record(latency: Duration, hit: Bool, hot: Bool = false) {
        let now = clock.now
        if window.last.map({ now - $0.start >= Self.slice }) ?? true {
            window.append(Slice(start: now))
            if window.count > Self.slices { window.removeFirst(window.count - Self.slices) }
        }
        window[window.count - 1].requests += 1
        if hit { window[window.count - 1].hits += 1 }
        if hot { window[window.count - 1].hotHits += 1 }
        let microseconds = UInt64(clamping: max(latency.wholeMicroseconds, 1))
        _ = window[window.count - 1].latency.record(min(microseconds, 3_600_000_000))
    }

    /// The figures of the slices that began within the last minute.
    func summary(name: String) -> (requests: Int, hits: Int, hotHits: Int, p50: Double, p99: Double, p999: Double) {
        let now = clock.now
        let recent = window.filter { now - $0.start < Self.slice * Self.slices }
        guard var merged = recent.first?.latency else { return (0, 0, 0, 0, 0, 0) }
        for slice in recent.dropFirst() { merged.add(slice.latency) }
        let requests = recent.reduce(0) { $0 + $1.requests }
        let hits = recent.reduce(0) { $0 + $1.hits }
        let hotHits = recent.reduce(0) { $0 + $1.hotHits }
        func milliseconds(_ percentile: Double) -> Double { Double(merged.valueAtPercentile(percentile)) / 1000 }
        return (requests, hits, hotHits, milliseconds(50), milliseconds(99), milliseconds(99.9))
    }
}

extension Duration {
    /// The duration in whole microseconds.
    var wholeMicroseconds: Int64 {
        let (seconds, attoseconds) = components
        return seconds * 1_000_000 + attoseconds / 1_000_000_000_000
    }
}
