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

    /// The one function deriving keys: method, domain (`any` when unnamed), the path without a
    /// leading `/`, and the query items ordered by name (same names keep their order).
    static func derive(method: String, domain: RequestDomain, path: String, query: [QueryItem]) -> String {
        let bare = path.hasPrefix("/") ? String(path.dropFirst()) : path
        let key = "\(method.uppercased()) \(domain) \(bare)"
        guard !query.isEmpty else { return key }
        let ordered = query.enumerated().sorted { ($0.element.name, $0.offset) < ($1.element.name, $1.offset) }.map(\.element)
        return key + "?" + ordered.encodedQuery
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
