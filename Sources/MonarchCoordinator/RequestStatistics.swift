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

    /// What one domain's answers came to (one lookup of the domain per answer).
    private struct DomainTotals {
        /// Answers by source (`none` for a failure) and status (nil for a failure).
        var answers: [SourceAndStatus: Int] = [:]
        /// Failures by code.
        var failures: [String: Int] = [:]
        var cacheHits = 0
        var cacheMisses = 0
        var hotHits = 0
        /// The last minute.
        var recent: DomainStatistics
        /// The latency timer, when metrics are on (made at the domain's first answer).
        var timer: Timer?
    }

    private struct SourceAndStatus: Hashable {
        var source: String
        var status: Int?
    }

    /// The totals of every domain that has had an answer, since start.
    private var domains: [String: DomainTotals] = [:]
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
        let metricsOn = metricsOn
        let clock = clock
        withTotals(of: domain, clock: clock) { totals in
            totals.answers[SourceAndStatus(source: source ?? "none", status: status), default: 0] += 1
            if let failureCode { totals.failures[failureCode, default: 0] += 1 }
            if cacheHit != nil {
                if hit { totals.cacheHits += 1 } else { totals.cacheMisses += 1 }
            }
            if hot { totals.hotHits += 1 }
            totals.recent.record(latency: latency, hit: hit, hot: hot)
            if metricsOn {
                let timer = totals.timer ?? Timer(label: "monarch_request_duration_seconds", dimensions: [("domain", domain)])
                totals.timer = timer
                timer.recordNanoseconds(max(0, latency.wholeMicroseconds * 1000))
            }
        }
    }

    /// Runs `change` on the totals of `domain`, in place (made at its first answer).
    private mutating func withTotals(of domain: String, clock: MonotonicClock, _ change: (inout DomainTotals) -> Void) {
        change(&domains[domain, default: DomainTotals(recent: DomainStatistics(clock: clock))])
    }

    /// Answers by domain, source and status, since start.
    var answers: [AnswerKey: Int] {
        var answers: [AnswerKey: Int] = [:]
        for (domain, totals) in domains {
            for (kind, count) in totals.answers {
                answers[AnswerKey(domain: domain, source: kind.source, status: kind.status)] = count
            }
        }
        return answers
    }

    /// Failures by domain and code, since start.
    var failures: [FailurePair: Int] {
        var failures: [FailurePair: Int] = [:]
        for (domain, totals) in domains {
            for (code, count) in totals.failures { failures[FailurePair(domain: domain, code: code)] = count }
        }
        return failures
    }

    /// Cache hits by domain (domains with any), since start.
    var cacheHits: [String: Int] { domains.compactMapValues { $0.cacheHits > 0 ? $0.cacheHits : nil } }
    /// Cache misses by domain (domains with any), since start.
    var cacheMisses: [String: Int] { domains.compactMapValues { $0.cacheMisses > 0 ? $0.cacheMisses : nil } }
    /// Of the cache hits, those the hot tier answered, by domain (domains with any), since start.
    var hotHits: [String: Int] { domains.compactMapValues { $0.hotHits > 0 ? $0.hotHits : nil } }
    /// The last minute, by domain.
    var recent: [String: DomainStatistics] { domains.mapValues(\.recent) }

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
