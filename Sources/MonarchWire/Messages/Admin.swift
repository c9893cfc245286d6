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

    /// Creates a store message whose body is `content`, as it travels.
    public init(
        id: MessageID, key: String, status: Int, headers: [String: String]? = nil, ttlMs: UInt64? = nil,
        content: MessageBody?
    ) {
        self.init(id: id, key: key, status: status, headers: headers, ttlMs: ttlMs)
        self.content = content
    }

    /// Creates a store message.
    public init(
        id: MessageID, key: String, status: Int, headers: [String: String]? = nil, body: Data? = nil,
        ttlMs: UInt64? = nil
    ) {
        self.id = id
        self.key = key
        self.status = status
        self.headers = headers
        self.content = body.map(MessageBody.init)
        self.ttlMs = ttlMs
    }

    private enum CodingKeys: String, CodingKey { case id, key, status, headers, body, ttlMs }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        id = try c.decodeID(forKey: .id)
        key = try c.decode(String.self, forKey: .key)
        status = try c.decodeStatus(forKey: .status)
        headers = try c.decodeIfPresent([String: String].self, forKey: .headers)
        content = try c.decodeIfPresent(Data.self, forKey: .body).map(MessageBody.init)
        ttlMs = try c.decodeIntegerIfPresent(UInt64.self, forKey: .ttlMs)
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(id, forKey: .id)
        try c.encode(key, forKey: .key)
        try c.encode(status, forKey: .status)
        try c.encodeIfPresent(headers, forKey: .headers)
        try c.encodeIfPresent(body, forKey: .body)
        try c.encodeIfPresent(ttlMs, forKey: .ttlMs)
    }
}

/// Drops cached entries: one key, or every key that starts with a prefix.
public struct InvalidateMessage: Codable, Sendable, Equatable {
    /// Which entries to drop.
    public enum Target: Sendable, Equatable {
        /// Exactly this key.
        case key(String)
        /// Every key starting with this prefix.
        case prefix(String)
    }

    /// The exchange's id; answered by a ``ResultMessage``.
    public var id: MessageID
    /// Which entries to drop.
    public var target: Target

    /// Creates an invalidate message.
    public init(id: MessageID, target: Target) {
        self.id = id
        self.target = target
    }

    private enum CodingKeys: String, CodingKey { case id, key, prefix }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        id = try c.decodeID(forKey: .id)
        let key = try c.decodeIfPresent(String.self, forKey: .key)
        let prefix = try c.decodeIfPresent(String.self, forKey: .prefix)
        switch (key, prefix) {
        case (let key?, nil): target = .key(key)
        case (nil, let prefix?): target = .prefix(prefix)
        case (_?, _?):
            throw DecodingError.dataCorruptedError(
                forKey: .prefix, in: c, debugDescription: "give either key or prefix, not both")
        case (nil, nil):
            throw DecodingError.keyNotFound(
                CodingKeys.key, .init(codingPath: c.codingPath, debugDescription: "one of key or prefix is required"))
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(id, forKey: .id)
        switch target {
        case .key(let key): try c.encode(key, forKey: .key)
        case .prefix(let prefix): try c.encode(prefix, forKey: .prefix)
        }
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
