import MonarchWire

/// What an invalidation did across the cluster's cache workers.
public struct Invalidation: Sendable, Equatable {
    /// Entries removed, summed over the workers.
    public var removed: Int
    /// Cache workers that answered.
    public var workers: Int
    /// The keys, key prefixes or tag the coordinator resolved the target to (a path gives its
    /// `GET` and `HEAD` keys, such as `GET api users/1`); empty from a coordinator that does
    /// not report them.
    public var targets: [String]

    /// Creates a report.
    public init(removed: Int, workers: Int, targets: [String] = []) {
        self.removed = removed
        self.workers = workers
        self.targets = targets
    }

    /// Whether nothing was cached under the target: no entry was removed.
    public var matchedNothing: Bool { removed == 0 }

    /// The report a coordinator's `result` to an `invalidate` carries.
    init(_ result: ResultMessage) {
        func count(_ name: String) -> Int {
            if case .integer(let value)? = result.data?[name] { return Int(value) }
            return 0
        }
        var targets: [String] = []
        if case .array(let values)? = result.data?["targets"] {
            for case .string(let text) in values { targets.append(text) }
        }
        self.init(removed: count("removed"), workers: count("workers"), targets: targets)
    }
}
