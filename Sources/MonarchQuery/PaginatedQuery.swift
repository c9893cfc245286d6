import Monarch
import Synchronization

/// Pages of a list, fetched one after the other and accumulated, until a page says there is
/// no more.
///
/// ```swift
/// let posts = queries.paginatedQuery(paging: .numbered()) { page in Posts(page: page.number) }
/// while posts.hasMore { try await posts.fetchNextPage() }
/// print(posts.items.count)
/// ```
///
/// The end: with numbered pages, a page with no items; with limit and offset, a page with
/// fewer items than the limit.
public final class PaginatedQuery<Item: Sendable>: Sendable {
    /// How pages are numbered.
    public enum Paging: Sendable, Equatable {
        /// Pages `first`, `first + 1`, …
        case numbered(first: Int = 1)
        /// `limit` items at a time, from offset 0.
        case offset(limit: Int)
    }

    /// The page to ask for: its number (numbered paging), or its offset and limit.
    public struct Page: Sendable, Equatable {
        /// The page's number (numbered paging); with offset paging, 0 for the first page, then 1, ….
        public var number: Int
        /// The offset of the page's first item (offset paging; 0 with numbered paging).
        public var offset: Int
        /// How many items a page holds at most (offset paging); nil with numbered paging.
        public var limit: Int?
    }

    private struct Inner {
        var loaded = 0
        var hasMore = true
        var inFlight: Task<Result<[Item], MonarchError>, Never>?
        /// How many times the pages were forgotten (``refetch()``): a fetch started before
        /// touches nothing when it ends.
        var epoch = 0
    }

    private let paging: Paging
    private let fetch: @Sendable (Page) async throws(MonarchError) -> [Item]
    private let inner = Mutex(Inner())
    private let broadcast = StateBroadcast<QueryState<[Item]>>(.idle)

    init(paging: Paging, fetch: @escaping @Sendable (Page) async throws(MonarchError) -> [Item]) {
        self.paging = paging
        self.fetch = fetch
    }

    /// Every item of the pages fetched so far, in order.
    public var items: [Item] { broadcast.state.value ?? [] }

    /// Whether another page may hold items (false once a page said it is the last).
    public var hasMore: Bool { inner.withLock { $0.hasMore } }

    /// The state: `idle` before the first page, `loading` (with the items so far) while a page
    /// is fetched, `success` with every item, `failure` keeping the items.
    public var state: QueryState<[Item]> { broadcast.state }

    /// The states from now on, beginning with the current one.
    public var states: AsyncStream<QueryState<[Item]>> { broadcast.stream() }

    /// Fetches the next page and appends its items (joining a fetch already in flight);
    /// nothing is asked once ``hasMore`` is false.
    ///
    /// - Returns: the new page's items (empty at the end).
    /// - Throws: the page request's ``MonarchError``; the items so far are kept and the same
    ///   page is asked again on the next call.
    @discardableResult
    public func fetchNextPage() async throws(MonarchError) -> [Item] {
        let task = inner.withLock { inner -> Task<Result<[Item], MonarchError>, Never>? in
            if let running = inner.inFlight { return running }
            guard inner.hasMore else { return nil }
            let page = page(after: inner.loaded)
            let epoch = inner.epoch
            broadcast.update { state in state = .loading(previous: state.value) }
            let task = Task { [self] () -> Result<[Item], MonarchError> in
                do throws(MonarchError) {
                    let items = try await fetch(page)
                    let current = self.inner.withLock { inner in
                        guard inner.epoch == epoch else { return false }
                        inner.loaded += 1
                        inner.hasMore = isMore(items)
                        inner.inFlight = nil
                        return true
                    }
                    if current { broadcast.update { state in state = .success((state.value ?? []) + items) } }
                    return .success(items)
                } catch {
                    let current = self.inner.withLock { inner in
                        guard inner.epoch == epoch else { return false }
                        inner.inFlight = nil
                        return true
                    }
                    if current { broadcast.update { state in state = .failure(error, previous: state.value) } }
                    return .failure(error)
                }
            }
            inner.inFlight = task
            return task
        }
        guard let task else { return [] }
        return try await task.value.get()
    }

    /// Forgets every page and fetches the first again.
    ///
    /// - Throws: what ``fetchNextPage()`` throws.
    public func refetch() async throws(MonarchError) {
        let running = inner.withLock { inner in
            defer { inner = Inner(epoch: inner.epoch + 1) }
            return inner.inFlight
        }
        running?.cancel()
        broadcast.set(.idle)
        try await fetchNextPage()
    }

    private func page(after loaded: Int) -> Page {
        switch paging {
        case .numbered(let first): Page(number: first + loaded, offset: 0, limit: nil)
        case .offset(let limit): Page(number: loaded, offset: loaded * limit, limit: limit)
        }
    }

    private func isMore(_ items: [Item]) -> Bool {
        switch paging {
        case .numbered: !items.isEmpty
        case .offset(let limit): items.count >= limit
        }
    }
}

extension QueryClient {
    /// Pages of the list that `request` asks for, page by page.
    public func paginatedQuery<R: MonarchRequest, Item: Sendable>(
        paging: PaginatedQuery<Item>.Paging, _ request: @escaping @Sendable (PaginatedQuery<Item>.Page) -> R
    ) -> PaginatedQuery<Item> where R.Response == [Item] {
        let service = service
        return PaginatedQuery(paging: paging) { page throws(MonarchError) in
            try await service.perform(request(page))
        }
    }
}
