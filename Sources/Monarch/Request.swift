#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import MonarchWire

/// A description of one resource to fetch: where it is (path, query), which providers may
/// answer it (domain), how (method, headers, body), how it may use caches (policy) and how
/// long the caller is willing to wait (deadline).
public struct Request: Sendable, Hashable {
    /// The resource's path, such as `users/1`.
    public var path: String
    /// Which providers may answer (see ``RequestDomain``).
    public var domain: RequestDomain
    /// Query items, in order, duplicates kept.
    public var query: [QueryItem]
    /// The method, uppercase (`GET` unless set).
    public var method: String
    /// Request headers.
    public var headers: [String: String]
    /// The request body, for methods that carry one.
    public var body: Data?
    /// How the request may use cached responses; nil leaves it to the route (or `cacheFirst`).
    public var policy: CachePolicy?
    /// How long the caller waits for an answer, at most; nil leaves it to the route (or 30 s).
    public var deadline: Duration?
    /// What routing decided about the request (parameters, upstream, TTL, cache key); empty
    /// until a router has seen it.
    public var route: RouteContext

    /// Creates a request; only the path is required.
    public init(
        path: String, domain: RequestDomain = .any, query: [QueryItem] = [], method: String = "GET",
        headers: [String: String] = [:], body: Data? = nil, policy: CachePolicy? = nil,
        deadline: Duration? = nil, route: RouteContext = RouteContext()
    ) {
        self.path = path
        self.domain = domain
        self.query = query
        self.method = method
        self.headers = headers
        self.body = body
        self.policy = policy
        self.deadline = deadline
        self.route = route
    }

    /// Whether the method only reads (`GET`, `HEAD`): such requests may be coalesced and cached;
    /// mutations never are.
    public var isReadOnly: Bool { method == "GET" || method == "HEAD" }

    /// Whether sending the request twice has the effect of sending it once (`GET`, `HEAD`,
    /// `PUT`, `DELETE`, `OPTIONS`): only such requests are retried after a lost worker or a
    /// failed connection.
    public var isIdempotent: Bool { isReadOnly || ["PUT", "DELETE", "OPTIONS"].contains(method) }

    /// Whether another request with the same key may be given this request's answer, and the
    /// answer kept for them: a read (`GET`, `HEAD`) without credentials (`Authorization`,
    /// `Cookie`: the answer may be for this caller alone) and without conditional or range
    /// headers (`If-None-Match`, `If-Modified-Since`, `If-Match`, `If-Unmodified-Since`,
    /// `If-Range`, `Range`: the answer may be a 304 or a part). Only such requests share a trip
    /// with identical requests in flight and are written back to caches.
    public var isShareable: Bool {
        isReadOnly && !headers.keys.contains { Self.personalHeaders.contains($0.lowercased()) }
    }

    /// Request headers that make an answer unfit for other requests (see ``isShareable``).
    static let personalHeaders: Set<String> = [
        "authorization", "cookie", "range", "if-range", "if-none-match", "if-modified-since", "if-match",
        "if-unmodified-since",
    ]
}

/// What routing decided about a request, handed on to the providers that serve it.
public struct RouteContext: Sendable, Hashable {
    /// The route's parameters, percent-decoded (`id` → `1` for `users/:id`).
    public var parameters: [String: String]
    /// The upstream URL with the parameters filled in, for providers that fetch.
    public var upstream: String?
    /// How long a response may be cached; nil means no expiry was configured.
    public var ttl: Duration?
    /// The key a cache stores the response under.
    public var cacheKey: String?

    /// Creates a route context; everything is optional.
    public init(parameters: [String: String] = [:], upstream: String? = nil, ttl: Duration? = nil, cacheKey: String? = nil) {
        self.parameters = parameters
        self.upstream = upstream
        self.ttl = ttl
        self.cacheKey = cacheKey
    }
}
