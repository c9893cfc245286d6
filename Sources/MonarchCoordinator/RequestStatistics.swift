import Metrics
import Monarch

/// What the coordinator's requests came to: totals since start (by domain, source, status and
/// failure code) and, per domain, the last minute (``DomainStatistics``). With metrics on, each
/// answer's latency also goes to a swift-metrics timer per domain. Loop thread only.
struct RequestStatistics {
    /// One kind of answer, for the totals.
    struct AnswerKey: Hashable {
        var domain: String
        /// The provider that answered, or `none` for a failure.
        var source: String
        /// The status; nil for a failure.
        var status: Int?

        /// The status as the metrics label it: the number, or `failure`.
        var statusLabel: String { status.map(String.init) ?? "failure" }
    }

    /// Answers by domain, source and status, since start.
    private(set) var answers: [AnswerKey: Int] = [:]
    /// Failures by domain and code, since start.
    private(set) var failures: [FailurePair: Int] = [:]
    /// Cache hits and misses by domain (domains whose chain has a cache), since start.
    private(set) var cacheHits: [String: Int] = [:]
    private(set) var cacheMisses: [String: Int] = [:]
    /// Of the cache hits, those the hot tier answered, by domain, since start.
    private(set) var hotHits: [String: Int] = [:]
    /// The last minute, by domain.
    private(set) var recent: [String: DomainStatistics] = [:]
    /// Latency timers by domain, when metrics are on.
    private var timers: [String: Timer] = [:]
    private let metricsOn: Bool
    /// The clock the last minute's slices are cut on.
    private let clock: MonotonicClock

    /// A domain and a failure code.
    struct FailurePair: Hashable {
        var domain: String
        var code: String
    }

    /// Statistics that also feed swift-metrics timers when `metricsOn`, the last minute
    /// measured on `clock`.
    init(metricsOn: Bool, clock: MonotonicClock) {
        self.metricsOn = metricsOn
        self.clock = clock
    }

    /// Records an answer of `domain` after `latency`: a response from `source` with `status`,
    /// or a failure with `failureCode`. `cacheHit`: whether a cache of the domain's chain
    /// answered it; nil when the chain has no cache (a miss is counted only where there is one);
    /// `hot`: the hot tier answered it (a cache hit counted apart from the cache workers').
    mutating func record(
        domain: String, source: String?, status: Int?, failureCode: String?, latency: Duration, cacheHit: Bool?,
        hot: Bool = false
    ) {
        let hit = cacheHit ?? false
        answers[AnswerKey(domain: domain, source: source ?? "none", status: status), default: 0] += 1
        if let failureCode { failures[FailurePair(domain: domain, code: failureCode), default: 0] += 1 }
        if cacheHit != nil {
            if hit { cacheHits[domain, default: 0] += 1 } else { cacheMisses[domain, default: 0] += 1 }
        }
        if hot { hotHits[domain, default: 0] += 1 }
        recent[domain, default: DomainStatistics(clock: clock)].record(latency: latency, hit: hit, hot: hot)
        if metricsOn {
            let timer = timers[domain] ?? {
                let made = Timer(label: "monarch_request_duration_seconds", dimensions: [("domain", domain)])
                timers[domain] = made
                return made
            }()
            timer.recordNanoseconds(max(0, latency.wholeMicroseconds * 1000))
        }
    }

    /// Answers since start by the provider that gave them.
    var answersBySource: [String: Int] {
        answers.reduce(into: [:]) { result, entry in
            if entry.key.source != "none" { result[entry.key.source, default: 0] += entry.value }
        }
    }

    /// Failures since start by code.
    var failuresByCode: [String: Int] {
        failures.reduce(into: [:]) { result, entry in result[entry.key.code, default: 0] += entry.value }
    }
}
