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
}

extension RequestMessage: WireObject {
    static var placeholder: RequestMessage { RequestMessage(id: 0, path: "") }

    static func fields<Visitor: FieldVisitor>(_ visitor: inout Visitor, _ request: inout RequestMessage) throws(Visitor.Failure) {
        try visitor.required("id", &request.id, Field.ID.self)
        try visitor.required("path", &request.path, Field.Text.self)
        try visitor.optional("domain", &request.domain, Field.Text.self)
        try visitor.optional("query", &request.query, Field.List<Field.Object<QueryItem>>.self)
        try visitor.optional("method", &request.method, Field.Method.self)
        try visitor.optional("headers", &request.headers, Field.StringMap.self)
        try visitor.optional("body", &request.body, Field.BodyBytes.self)
        try visitor.optional("policy", &request.policy, Field.Choice<CachePolicy>.self)
        try visitor.optional("deadlineMs", &request.deadlineMs, Field.Integer.self)
        try visitor.optional("params", &request.params, Field.StringMap.self)
        try visitor.optional("upstream", &request.upstream, Field.Text.self)
        try visitor.optional("ttlMs", &request.ttlMs, Field.Integer.self)
        try visitor.optional("key", &request.key, Field.Text.self)
        try visitor.optional("relay", &request.relay, Field.Boolean.self)
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
}

extension ResponseMessage: WireObject {
    static var placeholder: ResponseMessage { ResponseMessage(id: 0, status: 200) }

    static func fields<Visitor: FieldVisitor>(_ visitor: inout Visitor, _ response: inout ResponseMessage) throws(Visitor.Failure) {
        try visitor.required("id", &response.id, Field.ID.self)
        try visitor.required("status", &response.status, Field.Status.self)
        try visitor.optional("source", &response.source, Field.Text.self)
        try visitor.optional("headers", &response.headers, Field.StringMap.self)
        try visitor.optional("body", &response.content, Field.Body.self)
        try visitor.optional("stale", &response.stale, Field.Boolean.self)
        try visitor.optional("ageMs", &response.ageMs, Field.Integer.self)
        try visitor.optional("ttlMs", &response.ttlMs, Field.Integer.self)
        try visitor.optional("cacheable", &response.cacheable, Field.Boolean.self)
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
}

extension MissMessage: WireObject {
    static var placeholder: MissMessage { MissMessage(id: 0) }

    static func fields<Visitor: FieldVisitor>(_ visitor: inout Visitor, _ miss: inout MissMessage) throws(Visitor.Failure) {
        try visitor.required("id", &miss.id, Field.ID.self)
        try visitor.optional("source", &miss.source, Field.Text.self)
        try visitor.optional("reason", &miss.reason, Field.Text.self)
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
        public enum Outcome: String, Codable, Sendable, CaseIterable {
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
}

extension FailureMessage: WireObject {
    static var placeholder: FailureMessage { FailureMessage(id: 0, error: .placeholder) }

    static func fields<Visitor: FieldVisitor>(_ visitor: inout Visitor, _ failure: inout FailureMessage) throws(Visitor.Failure) {
        try visitor.required("id", &failure.id, Field.ID.self)
        try visitor.required("error", &failure.error, Field.Object<Detail>.self)
    }
}

extension FailureMessage.Detail: WireObject {
    static var placeholder: FailureMessage.Detail { FailureMessage.Detail(code: "", message: "") }

    static func fields<Visitor: FieldVisitor>(_ visitor: inout Visitor, _ detail: inout FailureMessage.Detail) throws(Visitor.Failure) {
        try visitor.required("code", &detail.code, Field.Code.self)
        try visitor.required("message", &detail.message, Field.Text.self)
        try visitor.optional("attempts", &detail.attempts, Field.List<Field.Object<FailureMessage.Attempt>>.self)
    }
}

extension FailureMessage.Attempt: WireObject {
    static var placeholder: FailureMessage.Attempt { FailureMessage.Attempt(provider: "", outcome: .miss) }

    static func fields<Visitor: FieldVisitor>(_ visitor: inout Visitor, _ attempt: inout FailureMessage.Attempt) throws(Visitor.Failure) {
        try visitor.required("provider", &attempt.provider, Field.Text.self)
        try visitor.required("outcome", &attempt.outcome, Field.Choice<Outcome>.self)
        try visitor.optional("code", &attempt.code, Field.Code.self)
        try visitor.optional("message", &attempt.message, Field.Text.self)
    }
}

/// Abandons a request in flight; the request still gets its one final answer.
public struct CancelMessage: Codable, Sendable, Equatable {
    /// The id of the request to abandon.
    public var id: MessageID

    /// Creates a cancel.
    public init(id: MessageID) { self.id = id }
}

extension CancelMessage: WireObject {
    static var placeholder: CancelMessage { CancelMessage(id: 0) }

    static func fields<Visitor: FieldVisitor>(_ visitor: inout Visitor, _ cancel: inout CancelMessage) throws(Visitor.Failure) {
        try visitor.required("id", &cancel.id, Field.ID.self)
    }
}
