import Monarch
import MonarchQuery
import MonarchWire
import Testing

@Suite(.timeLimit(.minutes(1))) struct PaginatedQueryTests {
    @Test("numbered pages accumulate until an empty page ends the data")
    func numbered() async throws {
        let provider = CounterProvider(total: 7)
        let queries = QueryClient(service: monarch(provider))
        let pages = queries.paginatedQuery(paging: .numbered()) { page in ItemsRequest(query: [QueryItem("page", page.number)]) }
        #expect(pages.state == .idle)
        var fetched = 0
        while pages.hasMore {
            try await pages.fetchNextPage()
            fetched += 1
        }
        #expect(pages.items == Array(0..<7))
        #expect(fetched == 4)   // 3 + 3 + 1, then an empty page
        #expect(try await pages.fetchNextPage() == [])
        #expect(provider.calls("GET items") == 4)
    }

    @Test("limit and offset pages end with a short page")
    func offset() async throws {
        let provider = CounterProvider(total: 5)
        let queries = QueryClient(service: monarch(provider))
        let pages = queries.paginatedQuery(paging: .offset(limit: 2)) { page in
            ItemsRequest(query: [QueryItem("offset", page.offset), QueryItem("limit", page.limit ?? 0)])
        }
        #expect(try await pages.fetchNextPage() == [0, 1])
        #expect(try await pages.fetchNextPage() == [2, 3])
        #expect(pages.hasMore)
        #expect(try await pages.fetchNextPage() == [4])
        #expect(!pages.hasMore)
        #expect(pages.state == .success([0, 1, 2, 3, 4]))
        try await pages.refetch()
        #expect(pages.items == [0, 1])
    }

    @Test("a fetch overtaken by refetch() leaves the new pages alone: no page twice, none skipped, no failure shown")
    func refetchOvertakesAFetch() async throws {
        let provider = CounterProvider(total: 5)
        let queries = QueryClient(service: monarch(provider))
        let pages = queries.paginatedQuery(paging: .offset(limit: 2)) { page in
            ItemsRequest(query: [QueryItem("offset", page.offset), QueryItem("limit", 2)])
        }
        provider.close()
        let first = Task { try? await pages.fetchNextPage() }
        try await eventually("the first fetch held") { provider.held >= 1 }
        let again = Task { try await pages.refetch() }
        try await eventually("the refetch held") { provider.held >= 2 }
        provider.open()
        _ = await first.value
        try await again.value
        #expect(pages.items == [0, 1])
        #expect(pages.state == .success([0, 1]))
        #expect(try await pages.fetchNextPage() == [2, 3], "the second page, not skipped")
        #expect(pages.items == [0, 1, 2, 3])
    }

    @Test("a failed page keeps the items and is asked again")
    func failure() async throws {
        let provider = CounterProvider(total: 5)
        let queries = QueryClient(service: monarch(provider))
        let pages = queries.paginatedQuery(paging: .offset(limit: 2)) { page in
            ItemsRequest(query: [QueryItem("offset", page.offset), QueryItem("limit", 2)])
        }
        try await pages.fetchNextPage()
        provider.setFailing(true)
        await #expect(throws: MonarchError.self) { try await pages.fetchNextPage() }
        #expect(pages.state.value == [0, 1])
        provider.setFailing(false)
        #expect(try await pages.fetchNextPage() == [2, 3])
    }
}
