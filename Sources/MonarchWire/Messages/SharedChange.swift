/// Cache worker → coordinator: a change to the shared store (Redis) made through another
/// coordinator, heard on the store's notifications, for the coordinator's watchers. Not an
/// exchange: no reply. Every cache worker of a coordinator hears the same change and forwards
/// it; `change` names it, so the coordinator tells its watchers once.
public struct SharedChangeMessage: Codable, Sendable, Equatable {
    /// What happened in the shared store.
    public enum Event: String, Codable, Sendable, CaseIterable {
        /// An entry was written back under `key` (with `tags`).
        case stored
        /// Entries were dropped under the `key`, `prefix` or `tag`.
        case invalidated
    }

    /// The change's id, the same in every worker's copy of it: 1 to
    /// ``SharedChangeMessage/maxChangeIDBytes`` bytes.
    public var change: String
    /// What happened.
    public var event: Event
    /// The target: a key (`stored`, or `invalidated` by key), a key prefix or a tag (`invalidated`).
    public var target: InvalidateMessage.Target
    /// The stored entry's tags (`stored` only).
    public var tags: [String]?

    /// The longest change id.
    public static let maxChangeIDBytes = 128

    /// Creates a shared-change message.
    public init(change: String, event: Event, target: InvalidateMessage.Target, tags: [String]? = nil) {
        self.change = change
        self.event = event
        self.target = target
        self.tags = tags
    }

    private enum CodingKeys: String, CodingKey { case change, event, key, prefix, tag, tags }

    /// Decodes one, refusing a `change` that is empty or too long, more than one of `key`,
    /// `prefix`, `tag`, and `tags` on an `invalidated` change (`invalidField`), and a change
    /// with no target or a `stored` one with no `key` (`missingField`).
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        change = try c.decode(String.self, forKey: .change)
        guard (1...Self.maxChangeIDBytes).contains(change.utf8.count) else {
            throw DecodingError.dataCorruptedError(
                forKey: .change, in: c, debugDescription: "change must be 1 to \(Self.maxChangeIDBytes) bytes")
        }
        event = try c.decode(Event.self, forKey: .event)
        let key = try c.decodeIfPresent(String.self, forKey: .key)
        let prefix = try c.decodeIfPresent(String.self, forKey: .prefix)
        let tag = try c.decodeIfPresent(String.self, forKey: .tag)
        tags = try c.decodeIfPresent([String].self, forKey: .tags)
        switch (key, prefix, tag) {
        case (let key?, nil, nil): target = .key(key)
        case (nil, let prefix?, nil): target = .prefix(prefix)
        case (nil, nil, let tag?): target = .tag(tag)
        case (nil, nil, nil):
            throw DecodingError.keyNotFound(
                CodingKeys.key, .init(codingPath: c.codingPath, debugDescription: "one of key, prefix and tag is required"))
        default:
            throw DecodingError.dataCorruptedError(
                forKey: tag != nil ? .tag : .prefix, in: c, debugDescription: "give exactly one of key, prefix and tag")
        }
        switch (event, target) {
        case (.stored, .key), (.invalidated, _): break
        default:
            throw DecodingError.keyNotFound(
                CodingKeys.key, .init(codingPath: c.codingPath, debugDescription: "a stored change names its key"))
        }
        if event == .invalidated, tags != nil {
            throw DecodingError.dataCorruptedError(forKey: .tags, in: c, debugDescription: "only a stored change has tags")
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(change, forKey: .change)
        try c.encode(event, forKey: .event)
        switch target {
        case .key(let key): try c.encode(key, forKey: .key)
        case .prefix(let prefix): try c.encode(prefix, forKey: .prefix)
        case .tag(let tag): try c.encode(tag, forKey: .tag)
        case .path, .pathPrefix: break
        }
        try c.encodeIfPresent(tags, forKey: .tags)
    }
}
