/// Which cache entries an `invalidate` drops or a `watch` follows: given by exactly one of
/// the fields `key`, `prefix`, `tag`, `path` and `pathPrefix` (with `domain` for the last two).
///
/// Keys and key prefixes are cache keys as they are stored (`GET api users/1`); paths are
/// resource paths (`users/1`) that the coordinator turns into keys through its router, so
/// nobody writes keys by hand. Cache workers are sent keys, prefixes and tags only.
public enum CacheTarget: Sendable, Hashable, CustomStringConvertible {
    /// Exactly this key.
    case key(String)
    /// Every key starting with this prefix (`""`: every key).
    case prefix(String)
    /// Every entry tagged so (an upstream's `Surrogate-Key` or `Cache-Tag` header).
    case tag(String)
    /// The entries of this resource path (`GET` and `HEAD` keys), in `domain`, else in the
    /// domain of the route the coordinator's router picks for it.
    case path(String, domain: String? = nil)
    /// The entries of every path starting with this one (`users/`), in `domain`, else in each
    /// domain of the routes such paths may match.
    case pathPrefix(String, domain: String? = nil)

    /// The text the target names (key, prefix, tag or path), for limits and messages.
    public var text: String {
        switch self {
        case .key(let text), .prefix(let text), .tag(let text), .path(let text, _), .pathPrefix(let text, _): text
        }
    }

    /// How the target reads to a person: `key "GET api users/1"`, `path "users/1"`.
    public var description: String {
        switch self {
        case .key(let key): "key \(LogText.quoted(key))"
        case .prefix(let prefix): "prefix \(LogText.quoted(prefix))"
        case .tag(let tag): "tag \(LogText.quoted(tag))"
        case .path(let path, let domain): "path \(LogText.quoted(path))" + (domain.map { " in domain \(LogText.quoted($0))" } ?? "")
        case .pathPrefix(let path, let domain):
            "path prefix \(LogText.quoted(path))" + (domain.map { " in domain \(LogText.quoted($0))" } ?? "")
        }
    }

    /// Whether a cache worker takes the target as it is (keys, prefixes and tags; paths are
    /// the coordinator's to resolve).
    public var isResolved: Bool {
        switch self {
        case .key, .prefix, .tag: true
        case .path, .pathPrefix: false
        }
    }

    enum CodingKeys: String, CodingKey { case key, prefix, tag, path, pathPrefix, domain }

    /// Reads the target from the fields of `c`: exactly one of `key`, `prefix`, `tag`, `path`,
    /// `pathPrefix` (none: key not found; several: data corrupted).
    init<K: CodingKey>(from c: KeyedDecodingContainer<K>) throws {
        func field(_ name: CodingKeys) throws -> String? {
            try c.decodeIfPresent(String.self, forKey: K(stringValue: name.rawValue)!)
        }
        let given: [(CodingKeys, String)] = try [CodingKeys.key, .prefix, .tag, .path, .pathPrefix].compactMap { name in
            try field(name).map { (name, $0) }
        }
        guard given.count <= 1 else {
            throw DecodingError.dataCorruptedError(
                forKey: K(stringValue: given[1].0.rawValue)!, in: c,
                debugDescription: "give exactly one of key, prefix, tag, path and pathPrefix, not \(given.map(\.0.rawValue).joined(separator: " and "))")
        }
        guard let (name, text) = given.first else {
            throw DecodingError.keyNotFound(
                K(stringValue: "key")!,
                .init(codingPath: c.codingPath, debugDescription: "one of key, prefix, tag, path and pathPrefix is required"))
        }
        let domain = try field(.domain)
        switch name {
        case .key: self = .key(text)
        case .prefix: self = .prefix(text)
        case .tag: self = .tag(text)
        case .path: self = .path(text, domain: domain)
        default: self = .pathPrefix(text, domain: domain)
        }
    }

    /// Writes the target's field (and `domain`) into `c`.
    func encode<K: CodingKey>(into c: inout KeyedEncodingContainer<K>) throws {
        func put(_ name: CodingKeys, _ value: String) throws { try c.encode(value, forKey: K(stringValue: name.rawValue)!) }
        switch self {
        case .key(let key): try put(.key, key)
        case .prefix(let prefix): try put(.prefix, prefix)
        case .tag(let tag): try put(.tag, tag)
        case .path(let path, let domain):
            try put(.path, path)
            if let domain { try put(.domain, domain) }
        case .pathPrefix(let path, let domain):
            try put(.pathPrefix, path)
            if let domain { try put(.domain, domain) }
        }
    }
}

/// A coding key made from any string: the fields of a ``CacheTarget`` inside another message.
struct AnyCodingKey: CodingKey {
    var stringValue: String
    var intValue: Int? { nil }
    init?(stringValue: String) { self.stringValue = stringValue }
    init?(intValue: Int) { nil }
}

/// Drops cached entries: by key, key prefix, tag, resource path or path prefix; or, as a
/// soft purge, marks them stale instead.
public struct InvalidateMessage: Codable, Sendable, Equatable {
    /// Which entries to drop.
    public typealias Target = CacheTarget

    /// The exchange's id; answered by a ``ResultMessage``.
    public var id: MessageID
    /// Which entries to drop.
    public var target: Target
    /// `soft`: the entries are kept but made stale now (their freshness ends at once; they stay
    /// for the cache's stale window, answered stale where a policy allows and revalidated),
    /// instead of being dropped. False when absent or null; sent only when true.
    public var soft: Bool

    /// Creates an invalidate message; `soft` marks the entries stale instead of dropping them.
    public init(id: MessageID, target: Target, soft: Bool = false) {
        self.id = id
        self.target = target
        self.soft = soft
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: AnyCodingKey.self)
        id = try c.decodeID(forKey: AnyCodingKey(stringValue: "id")!)
        target = try CacheTarget(from: c)
        soft = try c.decodeIfPresent(Bool.self, forKey: AnyCodingKey(stringValue: "soft")!) ?? false
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: AnyCodingKey.self)
        try c.encode(id, forKey: AnyCodingKey(stringValue: "id")!)
        try target.encode(into: &c)
        if soft { try c.encode(true, forKey: AnyCodingKey(stringValue: "soft")!) }
    }
}
