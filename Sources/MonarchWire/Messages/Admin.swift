#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Hands a response to a cache worker to keep under `key` (the coordinator's write-back).
public struct StoreMessage: Codable, Sendable, Equatable {
    /// The exchange's id; answered by a ``ResultMessage``.
    public var id: MessageID
    /// The cache key.
    public var key: String
    /// The response's status, 100…599.
    public var status: Int
    /// The response's headers.
    public var headers: [String: String]?
    /// The response's body as it travels: forwarded from frame to frame without being decoded.
    public var content: MessageBody?
    /// The response's body bytes (base64 on the wire).
    public var body: Data? {
        get { content?.bytes }
        set { content = newValue.map(MessageBody.init) }
    }
    /// How long to keep the entry fresh, in milliseconds; absent means no expiry.
    public var ttlMs: UInt64?
    /// The entry's tags (from the upstream's `Surrogate-Key` or `Cache-Tag`), for invalidation
    /// and watches by tag; absent: none.
    public var tags: [String]?
    /// What the entry remembers of the request it answered: the values of the request headers
    /// the entry varies on (its `Vary`, and the route's keyed headers), as `name:value` lines
    /// (a header the request lacked: its name alone); the entry then answers only requests
    /// whose values match. Absent: the entry varies on nothing.
    public var variant: String?

    /// Creates a store message whose body is `content`, as it travels.
    public init(
        id: MessageID, key: String, status: Int, headers: [String: String]? = nil, ttlMs: UInt64? = nil,
        content: MessageBody?, tags: [String]? = nil, variant: String? = nil
    ) {
        self.init(id: id, key: key, status: status, headers: headers, ttlMs: ttlMs, tags: tags)
        self.content = content
        self.variant = variant
    }

    /// Creates a store message.
    public init(
        id: MessageID, key: String, status: Int, headers: [String: String]? = nil, body: Data? = nil,
        ttlMs: UInt64? = nil, tags: [String]? = nil
    ) {
        self.id = id
        self.key = key
        self.status = status
        self.headers = headers
        self.content = body.map(MessageBody.init)
        self.ttlMs = ttlMs
        self.tags = tags
    }
}

extension StoreMessage: WireObject {
    static var placeholder: StoreMessage { StoreMessage(id: 0, key: "", status: 200) }

    static func fields<Visitor: FieldVisitor>(_ visitor: inout Visitor, _ store: inout StoreMessage) throws(Visitor.Failure) {
        try visitor.required("id", &store.id, Field.ID.self)
        try visitor.required("key", &store.key, Field.Text.self)
        try visitor.required("status", &store.status, Field.Status.self)
        try visitor.optional("headers", &store.headers, Field.StringMap.self)
        try visitor.optional("body", &store.content, Field.Body.self)
        try visitor.optional("ttlMs", &store.ttlMs, Field.Integer.self)
        try visitor.optional("tags", &store.tags, Field.List<Field.Text>.self)
        try visitor.optional("variant", &store.variant, Field.Text.self)
    }
}

/// Asks the coordinator for a report of its pools, workers and counters.
public struct StatusMessage: Codable, Sendable, Equatable {
    /// The exchange's id; answered by a ``ResultMessage``.
    public var id: MessageID

    /// Creates a status query.
    public init(id: MessageID) { self.id = id }

    private enum CodingKeys: String, CodingKey { case id }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        id = try c.decodeID(forKey: .id)
    }
}

/// Asks the coordinator to run `count` workers of `kind`.
public struct ScaleMessage: Codable, Sendable, Equatable {
    /// The exchange's id; answered by a ``ResultMessage``.
    public var id: MessageID
    /// The worker kind to scale.
    public var kind: String
    /// How many workers of that kind should run.
    public var count: Int

    /// Creates a scale message.
    public init(id: MessageID, kind: String, count: Int) {
        self.id = id
        self.kind = kind
        self.count = count
    }

    private enum CodingKeys: String, CodingKey { case id, kind, count }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        id = try c.decodeID(forKey: .id)
        kind = try c.decode(String.self, forKey: .kind)
        guard WireProtocol.isValidKind(kind) else {
            throw DecodingError.dataCorruptedError(
                forKey: .kind, in: c, debugDescription: "expected a kind matching [a-z][a-z0-9-]*, got \"\(kind)\"")
        }
        count = try c.decodeInteger(Int.self, forKey: .count, in: 0...Int.max)
    }
}

/// The success reply to a store, invalidate, status or scale message.
public struct ResultMessage: Codable, Sendable, Equatable {
    /// The id of the message answered.
    public var id: MessageID
    /// What the operation reports (removed entries, the status report, …).
    public var data: [String: JSONValue]?

    /// Creates a result.
    public init(id: MessageID, data: [String: JSONValue]? = nil) {
        self.id = id
        self.data = data
    }

    private enum CodingKeys: String, CodingKey { case id, data }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        id = try c.decodeID(forKey: .id)
        data = try c.decodeIfPresent([String: JSONValue].self, forKey: .data)
    }
}
