#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Monarch
import MonarchQuery
import MonarchWire
import Synchronization
import Testing

@Suite(.timeLimit(.minutes(1))) struct QueryTests {
    @Test("a query goes idle -> loading -> success; on demand it stays idle until started")
    func stateSequence() async throws {
        let provider = CounterProvider()
        let queries = QueryClient(service: monarch(provider))
        let query = queries.query(CounterRequest(), options: QueryOptions(start: .onDemand))
        #expect(query.state == .idle)
        provider.close()
        let states = query.states
        query.start()
        #expect(query.state == .loading(previous: nil))
        provider.open()
        let seen = await first(3, of: states)
        #expect(seen == [.idle, .loading(previous: nil), .success(Counter(value: 0))])
        #expect(provider.calls("GET counter") == 1)
    }

    @Test("a refetch keeps the last value while loading and after a failure")
    func lastValueKept() async throws {
        let provider = CounterProvider()
        let queries = QueryClient(service: monarch(provider))
        let query = queries.query(CounterRequest())
        #expect(await query.refetch() == .success(Counter(value: 0)))
        _ = try await monarch(provider).perform(IncrementRequest())
        provider.close()
        let refetching = Task { await query.refetch() }
        try await eventually("the refetch to start") { query.state.isLoading }
        #expect(query.state == .loading(previous: Counter(value: 0)))
        provider.open()
        #expect(await refetching.value == .success(Counter(value: 1)))

        provider.setFailing(true)
        let failed = await query.refetch()
        #expect(failed.value == Counter(value: 1))
        guard case .chainFailure(let chain)? = failed.error else {
            Issue.record("expected a chain failure, got \(failed)")
            return
        }
        #expect(chain.attempts.first?.code == "broken")
    }

    @Test("queries with the same key share one state and one request in flight")
    func sharing() async throws {
        let provider = CounterProvider()
        let queries = QueryClient(service: monarch(provider))
        provider.close()
        let one = queries.query(CounterRequest())
        let two = queries.query(CounterRequest())
        #expect(one.key == two.key)
        #expect(queries.liveKeys == 1)
        try await eventually("the request to reach the provider") { provider.calls("GET counter") >= 1 || one.state.isLoading }
        provider.open()
        #expect(await one.refetch().value == Counter(value: 0))
        #expect(two.state == one.state)
        #expect(provider.calls("GET counter") == 1)
    }

    @Test("a value fetched within the TTL is used without asking; a released query frees its key")
    func ttlAndRelease() async throws {
        let provider = CounterProvider()
        let queries = QueryClient(service: monarch(provider))
        var first: Query<Counter>? = queries.query(CounterRequest(), options: QueryOptions(ttl: .seconds(600)))
        _ = try await first!.value()
        let second = queries.query(CounterRequest(), options: QueryOptions(ttl: .seconds(600)))
        #expect(try await second.value() == Counter(value: 0))
        #expect(provider.calls("GET counter") == 1)
        let ending = second.states
        first = nil
        #expect(queries.liveKeys == 1)
        _ = consume second
        #expect(queries.liveKeys == 0)
        var count = 0
        for await _ in ending { count += 1 }
        #expect(count >= 1)
    }

    @Test("a polling query refetches by itself")
    func polling() async throws {
        let provider = CounterProvider()
        let queries = QueryClient(service: monarch(provider))
        let query = queries.query(CounterRequest(), options: QueryOptions(pollInterval: .milliseconds(30)))
        // Generous: at the start of a full run the machine is busy for many seconds.
        try await eventually("three polls", timeout: 90) { provider.calls("GET counter") >= 4 }
        #expect(query.state.value == Counter(value: 0))
    }

    @Test("a mutation invalidates its keys: live queries on them refetch before it returns")
    func mutationRefreshes() async throws {
        let provider = CounterProvider()
        let queries = QueryClient(service: monarch(provider))
        let query = queries.query(CounterRequest())
        #expect(await query.refetch() == .success(Counter(value: 0)))
        let increment = queries.mutation(IncrementRequest.self) { _ in [.key(QueryKey(path: "counter"))] }
        #expect(try await increment.perform(IncrementRequest()) == Counter(value: 1))
        #expect(query.state == .success(Counter(value: 1)))
        // A prefix reaches it too; another key does not.
        let other = queries.mutation(IncrementRequest.self) { _ in [.prefix(QueryKey(path: "elsewhere"))] }
        try await other.perform(IncrementRequest())
        #expect(query.state == .success(Counter(value: 1)))
        let prefix = queries.mutation(IncrementRequest.self) { _ in [.prefix(QueryKey(rawValue: "GET any count"))] }
        try await prefix.perform(IncrementRequest())
        #expect(query.state == .success(Counter(value: 3)))
    }

    @Test("a mutation never joins a refetch that read before it: the query ends with the value after it")
    func mutationDoesNotJoinAStaleRefetch() async throws {
        let provider = CounterProvider()
        let queries = QueryClient(service: monarch(provider))
        let query = queries.query(CounterRequest())
        #expect(await query.refetch() == .success(Counter(value: 0)))
        // A refetch reads 0, and is held on its way back.
        provider.holdReads()
        let early = Task { await query.refetch() }
        try await eventually("the early read held") { provider.heldReads >= 1 }
        let increment = queries.mutation(IncrementRequest.self) { _ in [.key(QueryKey(path: "counter"))] }
        let performing = Task { try await increment.perform(IncrementRequest()) }
        // The mutation's invalidation asks again (reading 1) rather than joining the early one.
        try await eventually("the invalidation's own read (not a join of the early refetch)") { provider.heldReads >= 2 }
        #expect(provider.heldReads == 2, "the invalidation joined the refetch that read before the mutation")
        provider.releaseReads()
        #expect(try await performing.value == Counter(value: 1))
        #expect(query.state == .success(Counter(value: 1)))
        #expect(await early.value == .success(Counter(value: 0)), "the early refetch's own caller gets what it read")
        #expect(query.state == .success(Counter(value: 1)), "and it does not overwrite the newer value")
    }

    @Test("a query with a policy and a TTL sends them")
    func policy() async throws {
        final class Recorder: RequestProvider, Sendable {
            var name: String { "recorder" }
            let seen = Mutex<(CachePolicy?, Duration?)>((nil, nil))
            func perform(_ request: Request) async -> ProviderOutcome {
                seen.withLock { $0 = (request.policy, request.route.ttl) }
                return .response(Response(body: Data(#"{"value":5}"#.utf8)))
            }
        }
        let recorder = Recorder()
        var service = Monarch()
        service.register(recorder)
        let queries = QueryClient(service: service)
        let query = queries.query(CounterRequest(), options: QueryOptions(policy: .networkFirst, ttl: .seconds(90)))
        #expect(try await query.value() == Counter(value: 5))
        #expect(recorder.seen.withLock { $0.0 } == .networkFirst)
        #expect(recorder.seen.withLock { $0.1 } == .seconds(90))
        // Without options, the request's own (none here).
        let plain = QueryClient(service: service).query(CounterRequest(), options: QueryOptions(start: .onDemand))
        _ = try await plain.value()
        #expect(recorder.seen.withLock { $0.0 } == nil)
        #expect(recorder.seen.withLock { $0.1 } == nil)
    }

    @Test("keys: method, domain, path, query ordered by name")
    func keys() {
        #expect(QueryKey(path: "/users/1", domain: "api").rawValue == "GET api users/1")
        #expect(QueryKey(Request(path: "a", query: [QueryItem("b", 2), QueryItem("a", 1)])).rawValue == "GET any a?a=1&b=2")
        #expect(QueryMatch.prefix(QueryKey(path: "users/", domain: "api")).matches(QueryKey(path: "users/9", domain: "api")))
        #expect(!QueryMatch.key(QueryKey(path: "users/", domain: "api")).matches(QueryKey(path: "users/9", domain: "api")))
    }
}
