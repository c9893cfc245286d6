import MonarchWire

/// The key a response is cached under: method, domain, canonical path and query.
///
/// This is the one derivation that the coordinator, the clients and the CLI share, so nobody
/// writes keys by hand. Its text (``rawValue``) reads `METHOD domain path?query`: the path in
/// ``ResourcePath/encoded`` form, then, when there are query items, `?` and the items encoded
/// as the upstream URL has them (``Swift/Array/encodedQuery``: form encoding, so separators
/// inside them cannot collide and a space is `+`) and ordered by name
/// (``Swift/Array/inKeyOrder``); items with the same name keep their order (`?tag=b&tag=a`
/// and `?tag=a&tag=b` reach an upstream as different URLs, so they are different keys), while
/// the order of different names does not matter: the upstream is asked in the key's order.
/// `GET api users/1`, `GET static hello.txt?a=1&b=2`.
///
/// The domain is a domain's name from the configuration. A client that does not know which
/// domain a path's route names lets the coordinator resolve the path instead (an `invalidate`
/// or `watch` with `path`).
///
/// The entries of a route with a `host` (served for requests to that host alone) carry the
/// route's host before the path, as a URL's authority: `GET site //example.com/index.html`,
/// `GET site //*.example.com/index.html` for a wildcard route (every host it matches is asked
/// the same upstream, so they share its entries). A canonical path never starts with `/`, so
/// such a key never equals a key without host, and two hosts' keys for one path differ;
/// keys without host are what they always were.
public struct CacheKey: Sendable, Hashable, CustomStringConvertible {
    /// The request method, such as `GET`.
    public let method: String
    /// The domain's name, such as `api`.
    public let domain: String
    /// The host of the route the key's entries belong to (its `host:` as written, such as
    /// `example.com` or `*.example.com`); nil for a route without one.
    public let host: String?
    /// The path in canonical form (``ResourcePath/encoded``), without query.
    public let path: String
    /// The query items, in the order they were given (the key orders them by name).
    public let query: [QueryItem]
    /// The key's text: what caches store the entry under.
    public let rawValue: String

    /// The key of `method` on `path` (already parsed) in `domain`, for the route host `host`
    /// (none: nil), with the path's own query items followed by `query`.
    public init(method: String = "GET", domain: String, host: String? = nil, path: ResourcePath, query: [QueryItem] = []) {
        self.init(method: method, domain: domain, host: host, encodedPath: path.encoded, query: path.query + query)
    }

    /// The key of `method` on the path `text` (parsed as requests are: a leading `/` or a full
    /// URL is the same path, `?query` is split off, components are percent-decoded once) in
    /// `domain`, for the route host `host` (none: nil), with the path's own query items
    /// followed by `query`.
    ///
    /// - Throws: ``PathError`` when `text` is not a usable path (empty, a dot segment, a bad
    ///   escape, a NUL byte).
    public init(
        method: String = "GET", domain: String, host: String? = nil, parsing text: String, query: [QueryItem] = []
    ) throws(PathError) {
        self.init(method: method, domain: domain, host: host, path: try ResourcePath(parsing: text), query: query)
    }

    /// The key of a path already in canonical form (``ResourcePath/encoded``) and its query,
    /// for the route host `host` (none: nil).
    public init(method: String, domain: String, host: String? = nil, encodedPath: String, query: [QueryItem]) {
        self.method = method
        self.domain = domain
        self.host = host
        self.path = encodedPath
        self.query = query
        self.rawValue = Self.text(method: method, domain: domain, host: host, encodedPath: encodedPath, query: query)
    }

    /// ``rawValue``.
    public var description: String { rawValue }

    /// Two keys are equal when their texts are (byte for byte).
    public static func == (left: CacheKey, right: CacheKey) -> Bool {
        left.rawValue.utf8.elementsEqual(right.rawValue.utf8)
    }

    /// Hashes the text's bytes, consistent with `==`.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(rawValue.utf8.count)
        for byte in rawValue.utf8 { hasher.combine(byte) }
    }

    /// The methods whose answers caches keep: a path's entries are under these keys.
    public static let cachedMethods = ["GET", "HEAD"]

    /// The key prefix that every key of `method` in `domain` for the route host `host` (none:
    /// nil) whose path starts with `pathPrefix` has: `GET api users/` for the path prefix
    /// `users/`, `GET site //example.com/users/` for the host `example.com`. The prefix is taken
    /// as written (canonical form: no leading `/`, components percent-encoded as
    /// ``ResourcePath/encoded`` writes them); see ``canonicalPathPrefix(_:)``.
    public static func prefix(method: String = "GET", domain: String, host: String? = nil, pathPrefix: String) -> String {
        "\(method) \(domain) \(authority(host))\(pathPrefix)"
    }

    /// A path prefix in canonical form: parsed as a path (so `/users/`, `users/` and
    /// `http://host/users/` agree), re-encoded, and a trailing `/` kept (`users/` covers
    /// `users/1` but not `users2`; `users` covers both). The empty prefix (or `/`) is refused: it
    /// would cover every path, which a key prefix of the domain says more plainly.
    ///
    /// - Throws: ``PathError`` when the prefix is not a usable path.
    public static func canonicalPathPrefix(_ text: String) throws(PathError) -> (components: [String], encoded: String, endsWithSlash: Bool) {
        var body = Substring(text)
        if let query = body.firstIndex(where: { $0 == "?" || $0 == "#" }) { body = body[..<query] }
        let endsWithSlash = body.hasSuffix("/")
        while body.hasSuffix("/") { body = body.dropLast() }
        let path = try ResourcePath(parsing: String(body))
        return (path.components, path.encoded + (endsWithSlash ? "/" : ""), endsWithSlash)
    }

    /// What stands before the path: `//HOST/` for a route host, nothing without.
    private static func authority(_ host: String?) -> String {
        host.map { "//\($0)/" } ?? ""
    }

    private static func text(method: String, domain: String, host: String?, encodedPath: String, query: [QueryItem]) -> String {
        var key = "\(method) \(domain) \(authority(host))\(encodedPath)"
        guard !query.isEmpty else { return key }
        key.append("?")
        // In the order the upstream URL has them too (``Swift/Array/inKeyOrder``).
        query.inKeyOrder.appendEncodedQuery(to: &key)
        return key
    }
}
