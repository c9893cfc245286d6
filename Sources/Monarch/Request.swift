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
    /// Whether the request is relayed for an HTTP client: the chain follows HTTP's caching
    /// rules (RFC 9111, see ``HTTPCacheRules``) instead of the ``policy``, and a network
    /// provider answers with what the upstream said, whatever its status, following no redirect.
    public var relay: Bool

    /// Creates a request; only the path is required.
    public init(
        path: String, domain: RequestDomain = .any, query: [QueryItem] = [], method: String = "GET",
        headers: [String: String] = [:], body: Data? = nil, policy: CachePolicy? = nil,
        deadline: Duration? = nil, route: RouteContext = RouteContext(), relay: Bool = false
    ) {
        self.relay = relay
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
    /// answer kept for them (see ``SharingRules/mayShare(_:)``): a read without a body whose
    /// every header is neutral, a tracing id, a negotiation header, one the route keys, or a
    /// credential on a public route. Any other request never shares a trip, is never answered
    /// by a cache, and is never written back.
    public var isShareable: Bool { SharingRules.mayShare(self) }

    /// The values of the request's headers that pick a representation: its `negotiation`
    /// headers (see ``HeaderRole``) and the route's keyed headers
    /// (``RouteContext/keyedHeaders``), as `name:value` lines sorted by lowercased name:
    /// identical reads share a trip only when these agree (a JSON client never gets the answer
    /// fetched for an XML client).
    public var negotiationVariant: String {
        headers.compactMap { name, value -> String? in
            let lowered = name.lowercased()
            let picks = HeaderRole(name: lowered) == .negotiation || route.keyedHeaders.contains(lowered)
            return picks ? "\(lowered):\(value)" : nil
        }.sorted().joined(separator: "\n")
    }
}

/// What a request header can do to the answer, which decides whether the answer may be shared
/// with other requests (coalescing, caches) — see ``SharingRules``.
///
/// - `neutral`: never changes the body a provider answers with: hop-by-hop headers, those the
///   network worker writes itself (`Host`, `Content-Length`, `Expect`, `Accept-Encoding`:
///   bodies are kept decoded), and client-side cache directives (`Cache-Control`, `Pragma`).
/// - `tracing`: tracing ids (`X-Request-Id`, `X-Correlation-Id`, `Traceparent`, `Tracestate`,
///   `Baggage`, `X-B3-*`, `B3`, `X-Amzn-Trace-Id`): a read that shares does not carry them
///   upstream unless its route keys them.
/// - `negotiation`: chooses among representations an origin may offer to anyone (`Accept`,
///   `Accept-Language`, `Accept-Charset`, `User-Agent`): requests share a trip only with the
///   same values, and a stored answer serves a request only when the values of the headers
///   its `Vary` names match.
/// - `credential`: says who the caller is (`Authorization`, `Cookie`, `X-Api-Key`,
///   `Proxy-Authorization`): the request passes the caches by and shares nothing, unless its
///   route is public.
/// - `personal`: everything else, conditions and ranges first (`Range`, `If-*`), and any
///   header Monarch does not know: the request shares nothing unless its route keys the
///   header.
public enum HeaderRole: Sendable, Equatable {
    /// Never changes the answer.
    case neutral
    /// A tracing id: never changes the answer, but is the caller's own.
    case tracing
    /// Chooses among shared representations.
    case negotiation
    /// Says who the caller is.
    case credential
    /// May make the answer the caller's alone.
    case personal

    /// The role of the header called `name` (compared without regard to case).
    public init(name: String) {
        let lowered = name.asciiLowercased
        if Self.neutralNames.contains(lowered) {
            self = .neutral
        } else if Self.tracingNames.contains(lowered) || lowered.hasPrefix("x-b3-") {
            self = .tracing
        } else if Self.negotiationNames.contains(lowered) {
            self = .negotiation
        } else if Self.credentialNames.contains(lowered) {
            self = .credential
        } else {
            self = .personal
        }
    }

    /// Headers that never change the answer (see ``HeaderRole``).
    public static let neutralNames: Set<String> = [
        "connection", "keep-alive", "proxy-connection", "te", "trailer", "transfer-encoding", "upgrade",
        "host", "content-length", "expect", "accept-encoding", "cache-control", "pragma",
    ]

    /// Tracing ids, besides `x-b3-*` (see ``HeaderRole``).
    public static let tracingNames: Set<String> = [
        "x-request-id", "x-correlation-id", "traceparent", "tracestate", "baggage", "b3", "x-amzn-trace-id",
    ]

    /// Headers that choose among shared representations (see ``HeaderRole``).
    public static let negotiationNames: Set<String> = ["accept", "accept-language", "accept-charset", "user-agent"]

    /// Headers that carry the caller's credentials (see ``HeaderRole``).
    public static let credentialNames: Set<String> = ["authorization", "cookie", "x-api-key", "proxy-authorization"]
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
    /// The TTL the requester asked for (its `ttlMs`), already within the route's `ttl`: it
    /// caps the stored entry's freshness, the upstream's included. Nil when it asked none.
    public var requestedTTL: Duration?
    /// Whether the route's resources are the same for every caller (its `public:`): a request
    /// with credentials may then share (see ``SharingRules``).
    public var isPublic: Bool
    /// The request headers (lowercase names) the route keys (its `headers:`): forwarded
    /// upstream, and every stored answer varies on them as if its `Vary` named them.
    public var keyedHeaders: [String]

    /// Creates a route context; everything is optional.
    public init(
        parameters: [String: String] = [:], upstream: String? = nil, ttl: Duration? = nil, cacheKey: String? = nil,
        requestedTTL: Duration? = nil, isPublic: Bool = false, keyedHeaders: [String] = []
    ) {
        self.isPublic = isPublic
        self.keyedHeaders = keyedHeaders
        self.parameters = parameters
        self.upstream = upstream
        self.ttl = ttl
        self.cacheKey = cacheKey
        self.requestedTTL = requestedTTL
    }
}
