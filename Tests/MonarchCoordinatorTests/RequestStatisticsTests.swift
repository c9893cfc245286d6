import Monarch
@testable import MonarchCoordinator
import Testing

@Suite("What requests came to, counted")
struct RequestStatisticsTests {
    @Test("Answers are counted by domain, source and status; a failure under source none and status failure")
    func answersByKind() {
        var statistics = RequestStatistics(metricsOn: false, clock: .system)
        for _ in 0..<2 {
            statistics.record(domain: "docs", source: "cache", status: 200, failureCode: nil, latency: .milliseconds(1), cacheHit: true)
        }
        statistics.record(domain: "docs", source: "network", status: 404, failureCode: nil, latency: .milliseconds(3), cacheHit: false)
        statistics.record(domain: "docs", source: nil, status: nil, failureCode: "exhausted", latency: .milliseconds(5), cacheHit: false)
        let labelled = Dictionary(uniqueKeysWithValues: statistics.answers.map { ("\($0.key.source) \($0.key.statusLabel)", $0.value) })
        #expect(labelled == ["cache 200": 2, "network 404": 1, "none failure": 1])
        #expect(statistics.cacheHits["docs"] == 2 && statistics.cacheMisses["docs"] == 2)
        #expect(statistics.failuresByCode == ["exhausted": 1])
        #expect(statistics.answersBySource == ["cache": 2, "network": 1])
    }

    @Test("The hot tier's hits are cache hits, counted apart per domain (status's hotHits, monarch_hot_hits_total)")
    func hotHitsApart() {
        var statistics = RequestStatistics(metricsOn: false, clock: .system)
        statistics.record(domain: "docs", source: "cache", status: 200, failureCode: nil, latency: .milliseconds(1), cacheHit: true)
        for _ in 0..<3 {
            statistics.record(
                domain: "docs", source: "cache", status: 200, failureCode: nil, latency: .microseconds(20), cacheHit: true, hot: true)
        }
        statistics.record(
            domain: "api", source: "cache", status: 200, failureCode: nil, latency: .microseconds(20), cacheHit: true, hot: true)
        #expect(statistics.cacheHits == ["docs": 4, "api": 1])
        #expect(statistics.hotHits == ["docs": 3, "api": 1])
        #expect(statistics.answersBySource == ["cache": 5], "a hot hit is the cache's answer, as the client sees it")
        let lastMinute = statistics.recent["docs"]?.summary(name: "docs")
        #expect(lastMinute?.hits == 4 && lastMinute?.hotHits == 3)
    }
}
