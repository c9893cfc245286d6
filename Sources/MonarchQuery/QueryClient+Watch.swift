import MonarchClient

extension QueryClient {
    /// Keeps this process's live queries fresh with changes made anywhere in the cluster —
    /// another connection, another process: each `invalidated` change `watch` reports
    /// refetches the live queries it concerns (its key, or the keys under its prefix; every
    /// live query for a tag), and an `overflow` (changes missed) refetches every live query.
    /// Entries stored or refreshed by fetches refetch nothing. A query's key matches the
    /// coordinator's when its request names its domain (``QueryKey``).
    ///
    /// ```swift
    /// let watch = try await client.watch(.pathPrefix("users/", domain: "api"))
    /// queries.refetch(following: watch)
    /// ```
    ///
    /// - Returns: the task that follows the watch, until the watch ends or the task is cancelled.
    @discardableResult
    public func refetch(following watch: CacheWatch) -> Task<Void, Never> {
        Task { [weak self] in
            for await change in watch {
                guard let self else { return }
                switch change.kind {
                case .invalidated:
                    if let key = change.key {
                        await refetchLive(matching: [.key(QueryKey(rawValue: key))])
                    } else if let prefix = change.prefix {
                        await refetchLive(matching: [.prefix(QueryKey(rawValue: prefix))])
                    } else {
                        await refetchLive(matching: nil)
                    }
                case .overflow:
                    await refetchLive(matching: nil)
                case .stored, .refreshed:
                    continue
                }
            }
        }
    }
}
