import Monarch
import MonarchWire

/// What a worker that keeps responses (a cache) does with the coordinator's `store` and
/// `invalidate` messages. A worker whose provider is not a cache answers them with a
/// `invalidRequest` failure.
public protocol CacheMaintenance: Sendable {
    /// Keeps `response` under `key`, fresh for `response.ttl` (for ever when nil), tagged
    /// with `tags` (replacing the tags of an entry it replaces). Returns only once the entry is
    /// as durable as the store promises (on disk for a file store), so an acknowledged store
    /// survives a restart. A `variant` (the `store` message's) makes the entry one variant of
    /// its key, answered only to requests whose values of the varied headers match it.
    ///
    /// - Throws: ``ProviderFailure`` when the entry cannot be kept.
    func store(_ response: Response, under key: String, tags: [String], variant: String?) async throws(ProviderFailure)

    /// Drops the entry under `target`'s key, every entry whose key starts with its prefix, or
    /// every entry tagged with its tag (the coordinator sends no other targets).
    ///
    /// - Returns: the keys of the entries dropped, each once.
    /// - Throws: ``ProviderFailure`` when the store cannot be changed.
    func invalidateKeys(_ target: InvalidateMessage.Target) async throws(ProviderFailure) -> [String]

    /// A soft purge (an `invalidate` with `soft: true`): makes the entries `target` names that
    /// are fresh now stale now, keeping them for the cache's stale window, instead of dropping
    /// them. By default a cache cannot, and refuses with `invalidRequest` (it never drops them
    /// instead: the coordinator's caller asked for stale entries, not for none).
    ///
    /// - Returns: the keys of the entries made stale, each once.
    /// - Throws: ``ProviderFailure`` when the store cannot be changed, or the cache cannot mark
    ///   entries stale.
    func markStaleKeys(_ target: InvalidateMessage.Target) async throws(ProviderFailure) -> [String]

    /// Figures of the store for `status` (entries, bytes, evictions, …), added to the
    /// worker's counters; none by default.
    var statusFigures: [String: JSONValue] { get }

    /// Starts handing `send` (on any thread) every change another coordinator made to a store
    /// this cache shares with it, and marks this worker's own changes as made through `origin`
    /// (the coordinator's identity, from its `welcome`). Nothing by default: a cache no other
    /// coordinator shares.
    func forwardSharedChanges(origin: String, to send: @escaping @Sendable (SharedChangeMessage) -> Void)
}

/// How many dropped keys a cache worker lists in its answer to an `invalidate` (`keys`): the
/// coordinator tells watchers of those keys; past this many it lists none, and the coordinator
/// tells every key and prefix watcher a tag invalidation may concern.
public let invalidatedKeysReported = 1000

extension CacheMaintenance {
    /// Drops like ``invalidateKeys(_:)``; returns how many entries were dropped.
    public func invalidate(_ target: InvalidateMessage.Target) async throws(ProviderFailure) -> Int {
        try await invalidateKeys(target).count
    }

    /// Keeps `response` under `key` with no tags, varying on nothing.
    public func store(_ response: Response, under key: String) async throws(ProviderFailure) {
        try await store(response, under: key, tags: [], variant: nil)
    }

    /// Keeps `response` under `key` tagged `tags`, varying on nothing.
    public func store(_ response: Response, under key: String, tags: [String]) async throws(ProviderFailure) {
        try await store(response, under: key, tags: tags, variant: nil)
    }

    /// Refuses: this cache cannot mark entries stale.
    public func markStaleKeys(_ target: InvalidateMessage.Target) async throws(ProviderFailure) -> [String] {
        throw ProviderFailure(code: .invalidRequest, message: "this cache cannot mark entries stale (a soft purge); nothing changed")
    }

    /// No figures.
    public var statusFigures: [String: JSONValue] { [:] }

    /// Nothing to forward.
    public func forwardSharedChanges(origin: String, to send: @escaping @Sendable (SharedChangeMessage) -> Void) {}
}
