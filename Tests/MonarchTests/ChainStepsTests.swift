#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Monarch
import MonarchWire
import Testing

/// The chain taken one answer at a time (``ChainSteps``) keeps the chain's rules: each answer
/// fed to it leads where ``ProviderChain/perform(_:)`` would have gone.
@Suite(.timeLimit(.minutes(1))) struct ChainStepsTests {
    let log = CallLog()

    private func steps(_ request: Request, _ providers: [any RequestProvider]) -> ChainSteps? {
        ChainSteps(request, along: providers, refreshes: RefreshGate(), background: BackgroundWork())
    }

    @Test("a miss asks the next provider; its response is the answer, with its source, written back to the cache before it")
    func missThenResponse() async throws {
        let probe = StoreProbe()
        let cache = StoringProvider("cache", log: log, probe: probe)
        let network = StubProvider("network", ok("fetched"), log: log)
        let run = try #require(steps(Request(path: "a"), [cache, network]))
        #expect(run.provider(at: 0)?.name == "cache")
        var attempts: [ProviderAttempt] = []
        var told: [ProviderAttempt] = []
        guard case .ask(1) = run.take(.miss(reason: "cold"), at: 0, attempts: &attempts, onAttempt: { told.append($0) }) else {
            Issue.record("a miss asks the next provider")
            return
        }
        #expect(attempts == [ProviderAttempt(provider: "cache", outcome: .miss, message: "cold")])
        #expect(told == attempts)
        #expect(run.provider(at: 1)?.name == "network")
        guard case .answer(let response) = run.take(ok("fetched"), at: 1, attempts: &attempts, onAttempt: { _ in }) else {
            Issue.record("a fresh response is the answer")
            return
        }
        #expect(response.source == "network")
        #expect(response.body == Data("fetched".utf8))
        var stored = probe.stream.makeAsyncIterator()
        #expect(await stored.next()?.provider == "cache")
    }

    @Test("every provider missing or failing gives the exhausted error perform gives")
    func exhausted() async throws {
        let providers: [any RequestProvider] = [
            StubProvider("cache", .miss(reason: "not cached"), log: log),
            StubProvider("network", .failure(ProviderFailure(code: "unavailable", message: "refused")), log: log),
        ]
        let expected = try #require(await chainError { () async throws(ChainError) in
            try await ProviderChain.perform(Request(path: "a"), along: providers)
        })
        let run = try #require(steps(Request(path: "a"), providers))
        var attempts: [ProviderAttempt] = []
        _ = run.take(.miss(reason: "not cached"), at: 0, attempts: &attempts, onAttempt: { _ in })
        let last = run.take(
            .failure(ProviderFailure(code: "unavailable", message: "refused")), at: 1, attempts: &attempts, onAttempt: { _ in })
        guard case .exhausted(let error) = last else {
            Issue.record("the last failure exhausts the chain")
            return
        }
        #expect(error == expected)
    }

    @Test("a stale entry goes back to the asynchronous run, which revalidates it as perform does")
    func staleGoesOnAsynchronously() async throws {
        let stale = ok("old", stale: true)
        let cache = StoringProvider("cache", stale, log: log, probe: StoreProbe())
        let network = StubProvider("network", ok("new"), log: log)
        let run = try #require(steps(Request(path: "a"), [cache, network]))
        var attempts: [ProviderAttempt] = []
        guard case .finishAsync = run.take(stale, at: 0, attempts: &attempts, onAttempt: { _ in }) else {
            Issue.record("a stale response needs the asynchronous run")
            return
        }
        let response = try await run.finish(from: 0, known: stale, prior: attempts) { _ in }
        #expect(response.body == Data("new".utf8))
        #expect(response.source == "network")
        // The cache's answer was known: only the network was asked.
        #expect(await log.calls == ["network"])
    }

    @Test("noCache passes the storing providers by; a relayed request a cache may answer is not run stepwise")
    func reachableProviders() throws {
        let cache = StoringProvider("cache", log: log, probe: StoreProbe())
        let network = StubProvider("network", ok("x"), log: log)
        var request = Request(path: "a")
        request.policy = .noCache
        let run = try #require(steps(request, [cache, network]))
        #expect(run.provider(at: 0)?.name == "network")
        #expect(run.provider(at: 1) == nil)
        var relayed = Request(path: "a")
        relayed.relay = true
        relayed.route.cacheKey = "GET a"
        #expect(steps(relayed, [cache, network]) == nil)
    }

    /// Relayed requests no cache of `[cache, network]` may answer: `noCache`, a `POST`, no key.
    static var forwardedRelays: [Request] {
        var noCache = Request(path: "a")
        noCache.policy = .noCache
        noCache.route.cacheKey = "GET a"
        var post = Request(path: "a", method: "POST")
        post.route.cacheKey = "POST a"
        return [noCache, post, Request(path: "a")].map { request in
            var request = request
            request.relay = true
            return request
        }
    }

    @Test("a relayed request no cache may answer goes to the origins stepwise, answered as perform answers it",
          arguments: forwardedRelays)
    func relayForwardedStepwise(request: Request) async throws {
        let answer = ProviderOutcome.response(Response(status: 404, body: Data("gone".utf8)))
        let cache = StoringProvider("cache", log: log, probe: StoreProbe())
        let first = StubProvider("first", .miss(reason: "not here"), log: log)
        let network = StubProvider("network", answer, log: log)
        let expected = try await ProviderChain.perform(request, along: [cache, first, network])
        let run = try #require(steps(request, [cache, first, network]))
        #expect(run.provider(at: 0)?.name == "first")
        #expect(run.provider(at: 1)?.name == "network")
        #expect(run.provider(at: 2) == nil)
        var attempts: [ProviderAttempt] = []
        var told: [ProviderAttempt] = []
        guard case .ask(1) = run.take(.miss(reason: "not here"), at: 0, attempts: &attempts, onAttempt: { told.append($0) }),
            case .answer(let response) = run.take(answer, at: 1, attempts: &attempts, onAttempt: { told.append($0) })
        else {
            Issue.record("a miss asks the next origin, whose response, any status, is the answer")
            return
        }
        #expect(response == expected)
        #expect(response.headers["cache-status"] == (request.isReadOnly ? "monarch; fwd=bypass" : "monarch; fwd=method"))
        // As a relay run, it tells no attempt as it goes.
        #expect(told.isEmpty)
        // Finished asynchronously from the miss already known, it answers the same.
        let finished = try await run.finish(from: 0, known: .miss(reason: "not here"), prior: []) { _ in }
        #expect(finished == expected)
    }

    @Test("a relayed request whose origins all miss or fail gets the error perform gives; with no cache, no Cache-Status")
    func relayForwardedExhausted() async throws {
        var request = Request(path: "a")
        request.relay = true
        let failure = ProviderOutcome.failure(ProviderFailure(code: "unavailable", message: "refused"))
        let providers: [any RequestProvider] = [
            StubProvider("first", .miss(reason: "not here"), log: log), StubProvider("network", failure, log: log),
        ]
        let expected = try #require(await chainError { () async throws(ChainError) in
            try await ProviderChain.perform(request, along: providers)
        })
        let run = try #require(steps(request, providers))
        var attempts: [ProviderAttempt] = []
        _ = run.take(.miss(reason: "not here"), at: 0, attempts: &attempts, onAttempt: { _ in })
        guard case .exhausted(let error) = run.take(failure, at: 1, attempts: &attempts, onAttempt: { _ in }) else {
            Issue.record("the last failure exhausts the chain")
            return
        }
        #expect(error == expected)
        let plain = ProviderOutcome.response(Response(status: 200, body: Data("x".utf8)))
        guard case .answer(let response) = run.take(plain, at: 1, attempts: &attempts, onAttempt: { _ in }) else {
            Issue.record("a response is the answer")
            return
        }
        #expect(response.headers["cache-status"] == nil)
        #expect(response.source == "network")
    }
}
