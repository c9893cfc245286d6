import Foundation
import Monarch
import MonarchClient
import MonarchQuery
import MonarchWire
import Testing

/// Queries, mutations and pages over a real cluster.
@Suite("Queries on a cluster", .serialized)
struct QueryClusterTests {
    struct Items: MonarchRequest {
        typealias Response = [Int]
        var page: Int
        var path: String { "api/items" }
        var query: [QueryItem] { [QueryItem("total", 10), QueryItem("per", 4), QueryItem("page", page)] }
        var previewData: [Int] { [] }
    }

    struct PolledCounter: MonarchRequest {
        typealias Response = Counter
        var path: String { "api/counter" }
        var domain: RequestDomain { "api" }
        var query: [QueryItem] { [QueryItem("view", "poll")] }
        var previewData: Counter { Counter(value: -1) }
    }

    @Test("A query's states, polling, a mutation that refreshes it past the cache, pages to the end")
    func queries() async throws {
        try await withClientOriginCluster { cluster, _ in
            let client = try await cluster.connect()
            defer { Task { await client.close() } }
            let queries = QueryClient(service: client)

            // States: idle until started, then loading, then the value.
            let counter = queries.query(CounterRequest(), options: QueryOptions(start: .onDemand))
            let states = counter.states
            counter.start()
            let seen = try await within(30, "three states") {
                var seen: [QueryState<Counter>] = []
                for await state in states.prefix(3) { seen.append(state) }
                return seen
            }
            #expect(seen == [.idle, .loading(previous: nil), .success(Counter(value: 0))])

            // The cache now holds the count: plain reads answer from it, the old value.
            try await eventually("the cache to hold api/counter") {
                try await client.perform(Request(path: "api/counter", domain: "api")).source == "cache"
            }
            let increment = queries.mutation(IncrementRequest.self) { _ in [.key(QueryKey(path: "api/counter", domain: "api"))] }
            #expect(try await increment.perform(IncrementRequest()) == Counter(value: 1))
            // The mutation dropped the cached copy, and the live query refetched before it returned.
            #expect(counter.state == .success(Counter(value: 1)))

            // Polling: a change made elsewhere shows up by itself (past the cache: noCache). A
            // key of its own: queries sharing a key share the first one's way of fetching.
            let polled = queries.query(PolledCounter(), options: QueryOptions(pollInterval: .milliseconds(200), policy: .noCache))
            #expect(try await polled.value() == Counter(value: 1))
            _ = try await client.perform(IncrementRequest())
            try await eventually("a poll to see the new count", timeout: 30) { polled.state.value == Counter(value: 2) }

            // Pages: 4 + 4 + 2 items, then an empty page.
            let pages = queries.paginatedQuery(paging: .numbered()) { page in Items(page: page.number) }
            while pages.hasMore { try await pages.fetchNextPage() }
            #expect(pages.items == Array(0..<10))
            #expect(pages.state == .success(Array(0..<10)))
        }
    }

    @Test("A query follows a watch: an invalidation made by another process refetches it")
    func queryFollowsAWatch() async throws {
        try await withClientOriginCluster { cluster, _ in
            let client = try await cluster.connect()
            defer { Task { await client.close() } }
            let queries = QueryClient(service: client)
            let counter = queries.query(CounterRequest())
            let before = try await counter.value().value
            let watch = try await client.watch(.path("api/counter", domain: "api"))
            let following = queries.refetch(following: watch)
            defer { following.cancel() }
            try await eventually("the cache to hold api/counter") {
                try await client.perform(Request(path: "api/counter", domain: "api")).source == "cache"
            }
            // The count changes at the origin; the cached copy does not know.
            _ = try await client.perform(IncrementRequest())
            #expect(counter.state == .success(Counter(value: before)))
            // Another process drops the cached copy: the live query here refetches by itself.
            let address = "unix:" + cluster.folder.path + "/c.sock"
            let dropped = try await Spawned.run(Executables.monarch, ["invalidate", "api/counter", "--domain", "api", "--address", address])
            #expect(dropped.status == 0, "\(dropped.stderr)")
            try await eventually("the query to refetch the new count") { counter.state == .success(Counter(value: before + 1)) }
        }
    }

    @Test("The preview service answers typed requests with no cluster at all")
    func preview() async throws {
        let queries = QueryClient(service: MonarchPreview())
        #expect(try await queries.query(CounterRequest()).value() == Counter(value: -1))
        #expect(try await MonarchPreview().perform(IncrementRequest()) == Counter(value: -1))
    }
}
