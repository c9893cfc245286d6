#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Monarch
import MonarchWire
import Synchronization
import Testing
import TestWaiting

/// A provider that records the requests it is asked and answers from `answer`.
final class RecordingProvider: RequestProvider, Sendable {
    let name: String
    private let answer: @Sendable (Request) async -> ProviderOutcome
    private let seen = Mutex<[Request]>([])

    init(_ name: String, answer: @escaping @Sendable (Request) async -> ProviderOutcome) {
        self.name = name
        self.answer = answer
    }

    /// The requests asked so far.
    var requests: [Request] { seen.withLock { $0 } }

    func perform(_ request: Request) async -> ProviderOutcome {
        seen.withLock { $0.append(request) }
        return await answer(request)
    }
}

/// A stale cached entry with validators.
private let staleEntry = Response(
    headers: ["ETag": "\"v1\"", "Last-Modified": "Mon, 23 Nov 2026 08:00:00 GMT", "Content-Type": "text/plain"],
    body: Data("cached body".utf8), stale: true, age: .seconds(90))

@Suite(.timeLimit(.minutes(1))) struct ChainPolicyTests {
    let log = CallLog()

    // MARK: cacheFirst

    @Test("cacheFirst: a fresh entry answers and later providers are not asked")
    func cacheFirstFresh() async throws {
        let network = RecordingProvider("network") { _ in ok("fetched") }
        let subject = chain(StoringProvider("cache", ok("cached"), log: log, probe: StoreProbe()), network)
        let response = try await subject.perform(Request(path: "a", policy: .cacheFirst))
        #expect(response.body == Data("cached".utf8))
        #expect(response.source == "cache")
        #expect(network.requests.isEmpty)
    }

    @Test("cacheFirst: a stale entry is revalidated; a 304 makes it fresh again and is written back")
    func cacheFirstRevalidates() async throws {
        let probe = StoreProbe()
        let network = RecordingProvider("network") { _ in
            .response(Response(status: 304, headers: ["ETag": "\"v1\"", "Cache-Control": "max-age=60"], ttl: .seconds(60)))
        }
        let subject = chain(StoringProvider("cache", .response(staleEntry), log: log, probe: probe), network)
        let response = try await subject.perform(Request(path: "a"))

        let asked = try #require(network.requests.first)
        #expect(asked.headers["If-None-Match"] == "\"v1\"")
        #expect(asked.headers["If-Modified-Since"] == "Mon, 23 Nov 2026 08:00:00 GMT")
        #expect(response.status == 200)
        #expect(response.body == Data("cached body".utf8))
        #expect(!response.stale)
        #expect(response.ttl == .seconds(60))
        #expect(response.headers["Cache-Control"] == "max-age=60")
        #expect(response.headers["Content-Type"] == "text/plain")
        #expect(response.source == "network")

        var stored = probe.stream.makeAsyncIterator()
        let entry = try #require(await stored.next())
        #expect(entry.provider == "cache")
        #expect(entry.response.body == Data("cached body".utf8))
        #expect(entry.response.ttl == .seconds(60))
    }

    @Test("cacheFirst: a stale entry is replaced by what a later provider answers in full")
    func cacheFirstReplacesStale() async throws {
        let probe = StoreProbe()
        let network = RecordingProvider("network") { _ in ok("new body") }
        let subject = chain(StoringProvider("cache", .response(staleEntry), log: log, probe: probe), network)
        let response = try await subject.perform(Request(path: "a"))
        #expect(response.body == Data("new body".utf8))
        var stored = probe.stream.makeAsyncIterator()
        #expect(try #require(await stored.next()).response.body == Data("new body".utf8))
    }

    @Test("cacheFirst: a stale entry is not answered when the later providers fail")
    func cacheFirstNoStaleOnError() async throws {
        let network = RecordingProvider("network") { _ in
            .failure(ProviderFailure(code: "connectionFailed", message: "refused"))
        }
        let subject = chain(StoringProvider("cache", .response(staleEntry), log: log, probe: StoreProbe()), network)
        let error = try #require(await chainError { () async throws(ChainError) in
            try await subject.perform(Request(path: "a", policy: .cacheFirst))
        })
        #expect(error.code == .exhausted)
        #expect(error.attempts.map(\.provider) == ["cache", "network"])
        #expect(error.attempts[0].outcome == .miss)
        #expect(error.attempts[0].message?.contains("stale") == true)
        #expect(error.attempts[1].code == "connectionFailed")
    }

    @Test("a client's own conditional headers are kept, and its 304 passes through untouched and unstored")
    func clientConditional() async throws {
        let probe = StoreProbe()
        let network = RecordingProvider("network") { _ in .response(Response(status: 304, headers: ["ETag": "\"v2\""])) }
        let subject = chain(StoringProvider("cache", .response(staleEntry), log: log, probe: probe), network)
        let response = try await subject.perform(Request(path: "a", headers: ["if-none-match": "\"v2\""]))
        #expect(network.requests.first?.headers == ["if-none-match": "\"v2\""])
        // The 304 is about the client's v2, not the cache's stale v1: v1 must not come back as fresh.
        #expect(response.status == 304)
        #expect(response.body.isEmpty)
        probe.continuation.yield(Stored(provider: "sentinel", path: "", response: Response()))
        var stored = probe.stream.makeAsyncIterator()
        #expect(try #require(await stored.next()).provider == "sentinel")
    }

    @Test("a 304 without freshness keeps the entry's own TTL")
    func revalidatedKeepsTTL() async throws {
        var entry = staleEntry
        entry.ttl = .seconds(45)
        let network = RecordingProvider("network") { _ in .response(Response(status: 304)) }
        let subject = chain(StoringProvider("cache", .response(entry), log: log, probe: StoreProbe()), network)
        let response = try await subject.perform(Request(path: "a"))
        #expect(response.status == 200)
        #expect(response.ttl == .seconds(45))
    }

    // MARK: networkFirst

    @Test("networkFirst: the fetch comes first and is written back; the cache is not asked")
    func networkFirstFetches() async throws {
        let probe = StoreProbe()
        let network = RecordingProvider("network") { _ in ok("fetched") }
        let subject = chain(StoringProvider("cache", ok("cached"), log: log, probe: probe), network)
        let response = try await subject.perform(Request(path: "a", policy: .networkFirst))
        #expect(response.body == Data("fetched".utf8))
        #expect(await log.calls.isEmpty)
        var stored = probe.stream.makeAsyncIterator()
        #expect(try #require(await stored.next()).provider == "cache")
    }

    @Test("networkFirst: when the fetch fails, the cache answers, stale entries too (stale if error)")
    func networkFirstStaleIfError() async throws {
        let network = RecordingProvider("network") { _ in .failure(ProviderFailure(code: "timeout", message: "slow")) }
        let subject = chain(StoringProvider("cache", .response(staleEntry), log: log, probe: StoreProbe()), network)
        let response = try await subject.perform(Request(path: "a", policy: .networkFirst))
        #expect(response.stale)
        #expect(response.age == .seconds(90))
        #expect(response.body == Data("cached body".utf8))
        #expect(network.requests.count == 1)
    }

    @Test("networkFirst asks the storing providers last; noCache not at all")
    func askingOrder() {
        let store = StoringProvider("cache", log: log, probe: StoreProbe())
        let bundle = StubProvider("bundle", .miss(reason: nil), log: log)
        let network = StubProvider("network", .miss(reason: nil), log: log)
        let providers: [any RequestProvider] = [store, bundle, network]
        func names(_ policy: CachePolicy?) -> [String] {
            ProviderChain.asked(for: Request(path: "a", policy: policy), from: providers).map(\.name)
        }
        #expect(names(nil) == ["cache", "bundle", "network"])
        #expect(names(.cacheFirst) == ["cache", "bundle", "network"])
        #expect(names(.cacheThenRefresh) == ["cache", "bundle", "network"])
        #expect(names(.networkFirst) == ["bundle", "network", "cache"])
        #expect(names(.noCache) == ["bundle", "network"])
    }

    // MARK: cacheThenRefresh

    @Test("cacheThenRefresh: a stale entry answers at once; one background refresh, however many read it")
    func cacheThenRefresh() async throws {
        let probe = StoreProbe()
        let (release, releaser) = AsyncStream.makeStream(of: Void.self)
        let network = RecordingProvider("network") { _ in
            for await _ in release { break }
            return .response(Response(status: 304, headers: ["ETag": "\"v1\""], ttl: .seconds(30)))
        }
        let subject = chain(StoringProvider("cache", .response(staleEntry), log: log, probe: probe), network)
        for _ in 0..<5 {
            let response = try await subject.perform(Request(path: "a", policy: .cacheThenRefresh))
            #expect(response.stale)
            #expect(response.body == Data("cached body".utf8))
        }
        try await eventually("the revalidation to reach the network", timeout: 5) { network.requests.count == 1 }
        #expect(network.requests[0].headers["If-None-Match"] == "\"v1\"")
        #expect(subject.refreshes.started == 1)
        releaser.yield()

        var stored = probe.stream.makeAsyncIterator()
        let refreshed = try #require(await stored.next())
        #expect(!refreshed.response.stale)
        #expect(refreshed.response.ttl == .seconds(30))
        #expect(refreshed.response.body == Data("cached body".utf8))
        try await eventually("the refresh to end", timeout: 5) { subject.refreshes.running == 0 }

        // The next stale read refreshes again: the gate is per refresh, not for ever.
        _ = try await subject.perform(Request(path: "a", policy: .cacheThenRefresh))
        releaser.yield()
        try await eventually("the second request to reach the network", timeout: 5) { network.requests.count == 2 }
        #expect(subject.refreshes.started == 2)
    }

    @Test("cacheThenRefresh: a fresh entry answers and nothing is refreshed")
    func cacheThenRefreshFresh() async throws {
        let network = RecordingProvider("network") { _ in ok("fetched") }
        let subject = chain(StoringProvider("cache", ok("cached"), log: log, probe: StoreProbe()), network)
        let response = try await subject.perform(Request(path: "a", policy: .cacheThenRefresh))
        #expect(response.body == Data("cached".utf8))
        #expect(subject.refreshes.started == 0)
        #expect(network.requests.isEmpty)
    }
}
