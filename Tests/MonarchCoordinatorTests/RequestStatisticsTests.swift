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

    @Test("The last minute is six ten-second slices of the statistics' clock: older answers drop out of it, the totals keep them")
    func lastMinute() {
        let clock = TestClock()
        var statistics = RequestStatistics(metricsOn: false, clock: clock.clock)
        statistics.record(domain: "docs", source: "cache", status: 200, failureCode: nil, latency: .milliseconds(2), cacheHit: true)
        clock.advance(by: .seconds(30))
        for _ in 0..<3 {
            statistics.record(
                domain: "docs", source: "network", status: 200, failureCode: nil, latency: .milliseconds(40), cacheHit: false)
        }
        var figures = statistics.recent["docs"]?.summary(name: "docs")
        #expect(figures?.requests == 4 && figures?.hits == 1)
        #expect(figures.map { $0.p50 >= 39 && $0.p50 <= 41 } == true, "\(String(describing: figures))")
        // The first slice began 59.999 s ago: still within the minute.
        clock.advance(by: .milliseconds(29_999))
        figures = statistics.recent["docs"]?.summary(name: "docs")
        #expect(figures?.requests == 4)
        // A minute after it began, it is out; the later slice stays.
        clock.advance(by: .milliseconds(1))
        figures = statistics.recent["docs"]?.summary(name: "docs")
        #expect(figures?.requests == 3 && figures?.hits == 0)
        // A minute after the last answer, nothing is left of the last minute.
        clock.advance(by: .seconds(30))
        figures = statistics.recent["docs"]?.summary(name: "docs")
        #expect(figures?.requests == 0 && figures?.p99 == 0)
        #expect(statistics.cacheHits["docs"] == 1 && statistics.cacheMisses["docs"] == 3, "the totals are since start")
    }

    @Test("Answers within ten seconds of a slice's start share it; the next answer after that starts a new one")
    func slices() {
        let clock = TestClock()
        var statistics = DomainStatistics(clock: clock.clock)
        statistics.record(latency: .milliseconds(1), hit: true)
        clock.advance(by: .milliseconds(9_999))
        statistics.record(latency: .milliseconds(1), hit: false)
        // The first slice (both answers) began 9.999 s ago; a minute after it began, both are out.
        clock.advance(by: .milliseconds(50_001))
        #expect(statistics.summary(name: "docs").requests == 0)
        // Had the second answer started a slice of its own, it would still count here.
        statistics.record(latency: .milliseconds(1), hit: true)
        #expect(statistics.summary(name: "docs").requests == 1)
    }
}
