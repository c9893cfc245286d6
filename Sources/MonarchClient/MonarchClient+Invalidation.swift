import Monarch
import MonarchRouter
import MonarchWire

extension MonarchClient {
    /// Drops the cached entries of the resource at `path` (its `GET` and `HEAD` keys), in
    /// `domain`, else in the domain of the route the coordinator picks for the path — the
    /// entries a request for `path` made.
    ///
    /// - Returns: the report; ``Invalidation/matchedNothing`` when nothing was cached.
    /// - Throws: ``MonarchError/chainFailure(_:)`` (`noRoute` when no route matches the
    ///   path, `unavailable` when no cache worker is connected, …).
    public func invalidate(path: String, domain: String? = nil) async throws(MonarchError) -> Invalidation {
        try await invalidate(.path(path, domain: domain))
    }

    /// Drops the cached entries of every path starting with `pathPrefix` (`users/` covers
    /// `users/1` and `users/1/notes`), in `domain`, else in each domain of the routes such
    /// paths may match.
    ///
    /// - Throws: ``MonarchError/chainFailure(_:)``.
    public func invalidate(pathPrefix: String, domain: String? = nil) async throws(MonarchError) -> Invalidation {
        try await invalidate(.pathPrefix(pathPrefix, domain: domain))
    }

    /// Drops every cached entry tagged `tag`: upstreams tag entries with a `Surrogate-Key` or
    /// `Cache-Tag` response header.
    ///
    /// - Throws: ``MonarchError/chainFailure(_:)``.
    public func invalidate(tag: String) async throws(MonarchError) -> Invalidation {
        try await invalidate(.tag(tag))
    }

    /// Drops the entry under `key`.
    ///
    /// - Throws: ``MonarchError/chainFailure(_:)``.
    public func invalidate(key: CacheKey) async throws(MonarchError) -> Invalidation {
        try await invalidate(.key(key.rawValue))
    }
}

extension Invalidation {
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
