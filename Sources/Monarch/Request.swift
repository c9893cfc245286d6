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
    /// answer kept for them: a read (`GET`, `HEAD`) without a body whose every header is one
    /// that ``HeaderRole`` calls `neutral` or `negotiation`. A credential (`Authorization`,
    /// `Cookie`, an API key in a header of its own), a condition or range (`If-None-Match`,
    /// `Range`, …) or any header Monarch does not know may make the answer this caller's
    /// alone: such requests never share a trip and are never written back to caches.
    public var isShareable: Bool {
        guard isReadOnly, body?.isEmpty ?? true else { return false }
        return headers.keys.allSatisfy { HeaderRole(name: $0) != .personal }
    }

    /// The values of the request's `negotiation` headers (see ``HeaderRole``), as
    /// `name:value` lines sorted by lowercased name: identical reads share a trip only when
    /// these agree (a JSON client never gets the answer fetched for an XML client).
    public var negotiationVariant: String {
        headers.compactMap { name, value -> String? in
            let lowered = name.lowercased()
            return HeaderRole(name: lowered) == .negotiation ? "\(lowered):\(value)" : nil
        }.sorted().joined(separator: "\n")
    }
}

/// What a request header can do to the answer, which decides whether the answer may be shared
/// with other requests (coalescing) and kept for them (write-back to caches).
///
/// - `neutral`: never changes the body a provider answers with: hop-by-hop headers, those the
///   network worker writes itself (`Host`, `Content-Length`, `Expect`, `Accept-Encoding`:
///   bodies are kept decoded), client-side cache directives (`Cache-Control`, `Pragma`), and
///   tracing ids (`X-Request-Id`, `X-Correlation-Id`, `Traceparent`, `Tracestate`, `Baggage`,
///   `X-B3-*`, `B3`, `X-Amzn-Trace-Id`).
/// - `negotiation`: chooses among representations an origin may offer to anyone (`Accept`,
///   `Accept-Language`, `Accept-Charset`, `User-Agent`): requests share a trip only with the
///   same values, and the answer may be stored (an origin that varies on them says so with
///   `Vary`, and such answers are never stored).
/// - `personal`: everything else, credentials and conditions first (`Authorization`, `Cookie`,
///   `Proxy-Authorization`, `Range`, `If-*`), and any header Monarch does not know (an
///   `X-Api-Key` is forwarded upstream and may pick whose data comes back).
public enum HeaderRole: Sendable, Equatable {
    /// Never changes the answer.
    case neutral
    /// Chooses among shared representations.
    case negotiation
    /// May make the answer the caller's alone.
    case personal

    /// The role of the header called `name` (compared without regard to case).
    public init(name: String) {
        let lowered = name.lowercased()
        if Self.neutralNames.contains(lowered) || lowered.hasPrefix("x-b3-") {
            self = .neutral
        } else if Self.negotiationNames.contains(lowered) {
            self = .negotiation
        } else {
            self = .personal
        }
    }

    /// Headers that never change the answer (see ``HeaderRole``).
    public static let neutralNames: Set<String> = [
        "connection", "keep-alive", "proxy-connection", "te", "trailer", "transfer-encoding", "upgrade",
        "host", "content-length", "expect", "accept-encoding", "cache-control", "pragma",
        "x-request-id", "x-correlation-id", "traceparent", "tracestate", "baggage", "b3", "x-amzn-trace-id",
    ]

    /// Headers that choose among shared representations (see ``HeaderRole``).
    public static let negotiationNames: Set<String> = ["accept", "accept-language", "accept-charset", "user-agent"]
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

    /// Creates a route context; everything is optional.
    public init(
        parameters: [String: String] = [:], upstream: String? = nil, ttl: Duration? = nil, cacheKey: String? = nil,
        requestedTTL: Duration? = nil
    ) {
        self.parameters = parameters
        self.upstream = upstream
        self.ttl = ttl
        self.cacheKey = cacheKey
        self.requestedTTL = requestedTTL
    }
}
