import MonarchWire

/// One change under a watch of cache entries (`MonarchClient.watch(_:bufferSize:)` yields
/// them as a `CacheWatch`; `QueryClient.refetch(following:)` follows any sequence of them): an
/// entry stored or refreshed, entries invalidated, or events lost.
public struct CacheChange: Sendable, Equatable {
    /// What happened.
    public enum Kind: String, Sendable, Equatable {
        /// A new entry was stored under ``CacheChange/key`` (a write-back after a cache miss).
        case stored
        /// An entry the cache had under ``CacheChange/key`` was replaced or made fresh again.
        case refreshed
        /// Entries were dropped: ``CacheChange/key``, ``CacheChange/prefix`` or
        /// ``CacheChange/tag`` says which invalidation.
        case invalidated
        /// Events were lost (the coordinator's queue for this watcher, or this process's
        /// buffer, was full, or the connection was restored): anything under the watch may
        /// have changed, so refetch what you show.
        case overflow
    }

    /// What happened.
    public var kind: Kind
    /// The entry's key (stored, refreshed) or the key invalidated.
    public var key: String?
    /// The key prefix invalidated.
    public var prefix: String?
    /// The tag invalidated.
    public var tag: String?
    /// The stored entry's tags.
    public var tags: [String]
    /// How many events were lost (`overflow`); nil when unknown (after a reconnect).
    public var dropped: Int?

    /// Creates a change.
    public init(
        kind: Kind, key: String? = nil, prefix: String? = nil, tag: String? = nil, tags: [String] = [], dropped: Int? = nil
    ) {
        self.kind = kind
        self.key = key
        self.prefix = prefix
        self.tag = tag
        self.tags = tags
        self.dropped = dropped
    }

    /// The change a `changed` message reports.
    package init(_ message: ChangedMessage) {
        let kind: Kind = switch message.event {
        case .stored: .stored
        case .refreshed: .refreshed
        case .invalidated: .invalidated
        case .overflow: .overflow
        }
        self.init(
            kind: kind, key: message.key, prefix: message.prefix, tag: message.tag, tags: message.tags ?? [],
            dropped: message.dropped)
    }
}
