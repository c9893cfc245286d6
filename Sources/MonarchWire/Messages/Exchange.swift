#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Asks for a resource. Sent by clients to the coordinator and by the coordinator to workers,
/// which add the route's fields (`params`, `upstream`, `ttlMs`, `key`).
public struct RequestMessage: Codable, Sendable, Equatable {
    /// The exchange's id, unique among the sender's requests in flight on this connection.
    public var id: MessageID
    /// The resource's path, such as `users/1`.
    public var path: String
    /// The domain the request belongs to; absent means the route decides.
    public var domain: String?
    /// Query items, in order, duplicates kept.
    public var query: [QueryItem]?
    /// The method (`GET` when absent).
    public var method: String?
    /// Request headers.
    public var headers: [String: String]?
    /// The request body (base64 on the wire).
    public var body: Data?
    /// How the request may use cached responses.
    public var policy: CachePolicy?
    /// The time budget in milliseconds, counted from receipt.
    public var deadlineMs: UInt64?
    /// The route's parameters (coordinator → worker).
    public var params: [String: String]?
    /// The upstream URL with the parameters filled in (coordinator → worker).
    public var upstream: String?
    /// How long a response may be cached, in milliseconds (coordinator → worker).
    public var ttlMs: UInt64?
    /// The cache key (coordinator → worker).
    public var key: String?
    /// Whether the request is relayed for an HTTP client: the chain keeps HTTP's caching rules
    /// (RFC 9111) instead of Monarch's, and a network worker answers with what the upstream
    /// said, whatever its status, following no redirect. Absent: false.
    public var relay: Bool?

    /// Creates a request.
    public init(
        id: MessageID, path: String, domain: String? = nil, query: [QueryItem]? = nil,
        method: String? = nil, headers: [String: String]? = nil, body: Data? = nil,
        policy: CachePolicy? = nil, deadlineMs: UInt64? = nil, params: [String: String]? = nil,
        upstream: String? = nil, ttlMs: UInt64? = nil, key: String? = nil, relay: Bool? = nil
    ) {
        self.id = id
        self.path = path
        self.domain = domain
        self.query = query
        self.method = method
        self.headers = headers
        self.body = body
        self.policy = policy
        self.deadlineMs = deadlineMs
        self.params = params
        self.upstream = upstream
        self.ttlMs = ttlMs
        self.key = key
        self.relay = relay
    }

    private enum CodingKeys: String, CodingKey {
        case id, path, domain, query, method, headers, body, policy, deadlineMs, params, upstream, ttlMs, key, relay
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        id = try c.decodeID(forKey: .id)
        path = try c.decode(String.self, forKey: .path)
        domain = try c.decodeIfPresent(String.self, forKey: .domain)
        query = try c.decodeIfPresent([QueryItem].self, forKey: .query)
        method = try c.decodeStringIfPresent(
            forKey: .method, expected: "an uppercase method such as GET or M-SEARCH", isValid: WireProtocol.isValidMethod)
        headers = try c.decodeIfPresent([String: String].self, forKey: .headers)
        body = try c.decodeIfPresent(Data.self, forKey: .body)
        policy = try c.decodeIfPresent(CachePolicy.self, forKey: .policy)
        deadlineMs = try c.decodeIntegerIfPresent(UInt64.self, forKey: .deadlineMs)
        params = try c.decodeIfPresent([String: String].self, forKey: .params)
        upstream = try c.decodeIfPresent(String.self, forKey: .upstream)
        ttlMs = try c.decodeIntegerIfPresent(UInt64.self, forKey: .ttlMs)
        key = try c.decodeIfPresent(String.self, forKey: .key)
        relay = try c.decodeIfPresent(Bool.self, forKey: .relay)
    }
}

/// A provider's answer: the resource.
public struct ResponseMessage: Codable, Sendable, Equatable {
    /// The id of the request answered.
    public var id: MessageID
    /// The HTTP-style status, 100…599.
    public var status: Int
    /// Which provider answered (`cache`, `bundle`, `network`, …).
    public var source: String?
    /// Response headers.
    public var headers: [String: String]?
    /// The body as it travels: forwarded from frame to frame without being decoded.
    public var content: MessageBody?
    /// The body's bytes (base64 on the wire).
    public var body: Data? {
        get { content?.bytes }
        set { content = newValue.map(MessageBody.init) }
    }
    /// Whether the entry came from a cache past its TTL.
    public var stale: Bool?
    /// How old a cached entry is, in milliseconds.
    public var ageMs: UInt64?
    /// How long the response may be cached, in milliseconds.
    public var ttlMs: UInt64?
    /// Whether the response may be cached at all (true when absent).
    public var cacheable: Bool?

    /// Creates a response whose body is `content`, as it travels.
    public init(
        id: MessageID, status: Int, source: String? = nil, headers: [String: String]? = nil,
        stale: Bool? = nil, ageMs: UInt64? = nil, ttlMs: UInt64? = nil, cacheable: Bool? = nil,
        content: MessageBody?
    ) {
        self.init(
            id: id, status: status, source: source, headers: headers, stale: stale, ageMs: ageMs, ttlMs: ttlMs,
            cacheable: cacheable)
        self.content = content
    }

    /// Creates a response.
    public init(
        id: MessageID, status: Int, source: String? = nil, headers: [String: String]? = nil,
        body: Data? = nil, stale: Bool? = nil, ageMs: UInt64? = nil, ttlMs: UInt64? = nil,
        cacheable: Bool? = nil
    ) {
        self.id = id
        self.status = status
        self.source = source
        self.headers = headers
        self.content = body.map(MessageBody.init)
        self.stale = stale
        self.ageMs = ageMs
        self.ttlMs = ttlMs
        self.cacheable = cacheable
    }

    private enum CodingKeys: String, CodingKey {
        case id, status, source, headers, body, stale, ageMs, ttlMs, cacheable
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        id = try c.decodeID(forKey: .id)
        status = try c.decodeStatus(forKey: .status)
        source = try c.decodeIfPresent(String.self, forKey: .source)
        headers = try c.decodeIfPresent([String: String].self, forKey: .headers)
        content = try c.decodeIfPresent(Data.self, forKey: .body).map(MessageBody.init)
        stale = try c.decodeIfPresent(Bool.self, forKey: .stale)
        ageMs = try c.decodeIntegerIfPresent(UInt64.self, forKey: .ageMs)
        ttlMs = try c.decodeIntegerIfPresent(UInt64.self, forKey: .ttlMs)
        cacheable = try c.decodeIfPresent(Bool.self, forKey: .cacheable)
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(id, forKey: .id)
        try c.encode(status, forKey: .status)
        try c.encodeIfPresent(source, forKey: .source)
        try c.encodeIfPresent(headers, forKey: .headers)
        try c.encodeIfPresent(body, forKey: .body)
        try c.encodeIfPresent(stale, forKey: .stale)
        try c.encodeIfPresent(ageMs, forKey: .ageMs)
        try c.encodeIfPresent(ttlMs, forKey: .ttlMs)
        try c.encodeIfPresent(cacheable, forKey: .cacheable)
    }
}

/// A provider's answer: not here, ask the next provider.
public struct MissMessage: Codable, Sendable, Equatable {
    /// The id of the request answered.
    public var id: MessageID
    /// Which provider missed.
    public var source: String?
    /// Why, for logs and aggregated errors.
    public var reason: String?

    /// Creates a miss.
    public init(id: MessageID, source: String? = nil, reason: String? = nil) {
        self.id = id
        self.source = source
        self.reason = reason
    }

    private enum CodingKeys: String, CodingKey { case id, source, reason }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        id = try c.decodeID(forKey: .id)
        source = try c.decodeIfPresent(String.self, forKey: .source)
        reason = try c.decodeIfPresent(String.self, forKey: .reason)
    }
}

/// The final answer when a request failed; carries what each provider did.
public struct FailureMessage: Codable, Sendable, Equatable {
    /// What went wrong.
    public struct Detail: Codable, Sendable, Equatable {
        /// A chain failure code (`noRoute`, `exhausted`, `deadlineExceeded`, …).
        public var code: FailureCode
        /// A sentence for a person.
        public var message: String
        /// Each provider's outcome, in chain order.
        public var attempts: [Attempt]?

        /// Creates a failure detail.
        public init(code: FailureCode, message: String, attempts: [Attempt]? = nil) {
            self.code = code
            self.message = message
            self.attempts = attempts
        }
    }

    /// What one provider did with the request.
    public struct Attempt: Codable, Sendable, Equatable {
        /// How a provider's attempt ended.
        public enum Outcome: String, Codable, Sendable {
            case miss, failure, timeout, cancelled
        }

        /// The provider asked (`cache`, `bundle`, `network`, …).
        public var provider: String
        /// How its attempt ended.
        public var outcome: Outcome
        /// The provider's failure code, for failures.
        public var code: FailureCode?
        /// The provider's explanation.
        public var message: String?

        /// Creates an attempt record.
        public init(provider: String, outcome: Outcome, code: FailureCode? = nil, message: String? = nil) {
            self.provider = provider
            self.outcome = outcome
            self.code = code
            self.message = message
        }
    }

    /// The id of the request answered.
    public var id: MessageID
    /// What went wrong.
    public var error: Detail

    /// Creates a failure.
    public init(id: MessageID, error: Detail) {
        self.id = id
        self.error = error
    }

    private enum CodingKeys: String, CodingKey { case id, error }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        id = try c.decodeID(forKey: .id)
        error = try c.decode(Detail.self, forKey: .error)
    }
}

/// Abandons a request in flight; the request still gets its one final answer.
public struct CancelMessage: Codable, Sendable, Equatable {
    /// The id of the request to abandon.
    public var id: MessageID

    /// Creates a cancel.
    public init(id: MessageID) { self.id = id }

    private enum CodingKeys: String, CodingKey { case id }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        id = try c.decodeID(forKey: .id)
    }
}

extension KeyedDecodingContainer {
    /// Decodes an HTTP-style status, 100…599.
    func decodeStatus(forKey key: Key) throws -> Int {
        try decodeInteger(Int.self, forKey: key, in: 100...599)
    }
}
