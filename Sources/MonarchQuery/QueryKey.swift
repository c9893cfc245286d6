import Monarch
import MonarchRouter
import MonarchWire

/// The identity of a query: queries with the same key in one process share one state and one
/// request in flight, and invalidation selects queries by key or key prefix.
///
/// A key reads `METHOD domain path?sorted-query` (`GET api users/1`), the form a coordinator
/// caches under when the request names its domain, so a key also invalidates cluster caches.
public struct QueryKey: Hashable, Sendable, CustomStringConvertible {
    /// The key as text.
    public let rawValue: String

    /// The key `rawValue`, as it is.
    public init(rawValue: String) { self.rawValue = rawValue }

    /// The key of `request`.
    public init(_ request: Request) {
        rawValue = Self.derive(method: request.method, domain: request.domain, path: request.path, query: request.query)
    }

    /// The key of the request with these parts (a `GET` with no query by default).
    public init(path: String, domain: RequestDomain = .any, method: String = "GET", query: [QueryItem] = []) {
        rawValue = Self.derive(method: method, domain: domain, path: path, query: query)
    }

    /// Whether this key starts with `prefix`.
    public func hasPrefix(_ prefix: QueryKey) -> Bool { rawValue.hasPrefix(prefix.rawValue) }

    public var description: String { rawValue }

    /// The key a coordinator caches the request under (``CacheKey``, the one derivation of
    /// keys), with `any` as the domain when the request names none; a path that does not
    /// parse keeps its text as it is (such a request fails, and its key only has to be its own).
    static func derive(method: String, domain: RequestDomain, path: String, query: [QueryItem]) -> String {
        let domain = "\(domain)"
        if let key = try? CacheKey(method: method.uppercased(), domain: domain, parsing: path, query: query) { return key.rawValue }
        return CacheKey(method: method.uppercased(), domain: domain, encodedPath: path, query: query).rawValue
    }
}

/// Which queries (and cached entries) an invalidation reaches.
public enum QueryMatch: Hashable, Sendable {
    /// The one key.
    case key(QueryKey)
    /// Every key starting with this one.
    case prefix(QueryKey)

    /// Whether `key` is matched.
    public func matches(_ key: QueryKey) -> Bool {
        switch self {
        case .key(let exact): key == exact
        case .prefix(let prefix): key.hasPrefix(prefix)
        }
    }

    /// The same target for a cluster's cache workers.
    var wireTarget: InvalidateMessage.Target {
        switch self {
        case .key(let key): .key(key.rawValue)
        case .prefix(let prefix): .prefix(prefix.rawValue)
        }
    }
}
