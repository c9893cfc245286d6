import Monarch

extension QueryClient {
    /// Keeps this process's live queries fresh with changes made anywhere in the cluster —
    /// another connection, another process: each `invalidated` change `changes` reports
    /// refetches the live queries it concerns (its key, or the keys under its prefix; every
    /// live query for a tag), and an `overflow` (changes missed) refetches every live query.
    /// Entries stored or refreshed by fetches refetch nothing. A query's key matches the
    /// coordinator's when its request names its domain (``QueryKey``).
    ///
    /// `changes` is any sequence of ``CacheChange``s: a cluster client's watch
    /// (`MonarchClient.watch(_:bufferSize:)` returns a `CacheWatch`), or one of your own.
    ///
    /// ```swift
    /// let watch = try await client.watch(.pathPrefix("users/", domain: "api"))
    /// queries.refetch(following: watch)
    /// ```
    ///
    /// - Returns: the task that follows the changes, until the sequence ends or the task is
    ///   cancelled.
    @discardableResult
    public func refetch<Changes: AsyncSequence & Sendable>(following changes: Changes) -> Task<Void, Never>
    where Changes.Element == CacheChange, Changes.Failure == Never {
        Task { [weak self] in
            for await change in changes {
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
