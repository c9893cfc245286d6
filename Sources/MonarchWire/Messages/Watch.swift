/// Client → coordinator: follow the cache entries a target names, by key, key prefix, tag,
/// resource path or path prefix (``CacheTarget``). Answered by a ``ResultMessage``; from then
/// on the coordinator pushes a ``ChangedMessage`` naming this message's `id` for every change,
/// until an ``UnwatchMessage`` or the connection's end.
public struct WatchMessage: Codable, Sendable, Equatable {
    /// The exchange's id, which also names the watch in `changed` and `unwatch`.
    public var id: MessageID
    /// What to follow.
    public var target: CacheTarget

    /// Creates a watch message.
    public init(id: MessageID, target: CacheTarget) {
        self.id = id
        self.target = target
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: AnyCodingKey.self)
        id = try c.decodeID(forKey: AnyCodingKey(stringValue: "id")!)
        target = try CacheTarget(from: c)
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: AnyCodingKey.self)
        try c.encode(id, forKey: AnyCodingKey(stringValue: "id")!)
        try target.encode(into: &c)
    }
}

/// Client → coordinator: stop a watch. Answered by a ``ResultMessage`` (`{"removed": true}`, or
/// `false` when no such watch was active).
public struct UnwatchMessage: Codable, Sendable, Equatable {
    /// The exchange's id.
    public var id: MessageID
    /// The id of the `watch` message that started the watch.
    public var watch: MessageID

    /// Creates an unwatch message.
    public init(id: MessageID, watch: MessageID) {
        self.id = id
        self.watch = watch
    }

    private enum CodingKeys: String, CodingKey { case id, watch }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        id = try c.decodeID(forKey: .id)
        watch = try c.decodeID(forKey: .watch)
    }
}

/// Coordinator → client: something changed under a watch. Not an exchange: no reply.
public struct ChangedMessage: Codable, Sendable, Equatable {
    /// What happened.
    public enum Event: String, Codable, Sendable, CaseIterable {
        /// A new entry was stored under `key` (a write-back after a cache miss).
        case stored
        /// An entry the cache had was replaced or made fresh again under `key` (revalidation,
        /// a background refresh).
        case refreshed
        /// Entries were dropped: the `key`, `prefix` or `tag` says which invalidation.
        case invalidated
        /// Events for this watch were dropped because the client did not read them fast
        /// enough (`dropped` of them): anything under the watch may have changed.
        case overflow
    }

    /// The id of the `watch` message that started the watch.
    public var watch: MessageID
    /// What happened.
    public var event: Event
    /// The entry's key (`stored`, `refreshed`), or the key invalidated.
    public var key: String?
    /// The key prefix invalidated.
    public var prefix: String?
    /// The tag invalidated.
    public var tag: String?
    /// The entry's tags (`stored`, `refreshed`).
    public var tags: [String]?
    /// How many events were dropped (`overflow`).
    public var dropped: Int?

    /// Creates a changed message.
    public init(
        watch: MessageID, event: Event, key: String? = nil, prefix: String? = nil, tag: String? = nil,
        tags: [String]? = nil, dropped: Int? = nil
    ) {
        self.watch = watch
        self.event = event
        self.key = key
        self.prefix = prefix
        self.tag = tag
        self.tags = tags
        self.dropped = dropped
    }

    private enum CodingKeys: String, CodingKey { case watch, event, key, prefix, tag, tags, dropped }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        watch = try c.decodeID(forKey: .watch)
        event = try c.decode(Event.self, forKey: .event)
        key = try c.decodeIfPresent(String.self, forKey: .key)
        prefix = try c.decodeIfPresent(String.self, forKey: .prefix)
        tag = try c.decodeIfPresent(String.self, forKey: .tag)
        tags = try c.decodeIfPresent([String].self, forKey: .tags)
        dropped = try c.decodeIntegerIfPresent(Int.self, forKey: .dropped, in: 0...Int.max)
    }
}
