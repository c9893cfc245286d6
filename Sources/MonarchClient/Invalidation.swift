/// What an invalidation did across the cluster's cache workers.
public struct Invalidation: Sendable, Equatable {
    /// Entries removed, summed over the workers.
    public var removed: Int
    /// Cache workers that answered.
    public var workers: Int

    /// Creates a report.
    public init(removed: Int, workers: Int) {
        self.removed = removed
        self.workers = workers
    }
}
