/// Asks the peer to prove it is alive; answered by a ``PongMessage`` with the same id.
public struct PingMessage: Codable, Sendable, Equatable {
    /// An id the pong echoes.
    public var id: MessageID?

    /// Creates a ping.
    public init(id: MessageID? = nil) { self.id = id }
}

extension PingMessage: WireObject {
    static var placeholder: PingMessage { PingMessage() }

    static func fields<Visitor: FieldVisitor>(_ visitor: inout Visitor, _ ping: inout PingMessage) throws(Visitor.Failure) {
        try visitor.optional("id", &ping.id, Field.ID.self)
    }
}

/// The answer to a ``PingMessage``.
public struct PongMessage: Codable, Sendable, Equatable {
    /// The ping's id.
    public var id: MessageID?

    /// Creates a pong.
    public init(id: MessageID? = nil) { self.id = id }
}

extension PongMessage: WireObject {
    static var placeholder: PongMessage { PongMessage() }

    static func fields<Visitor: FieldVisitor>(_ visitor: inout Visitor, _ pong: inout PongMessage) throws(Visitor.Failure) {
        try visitor.optional("id", &pong.id, Field.ID.self)
    }
}

/// Reports a protocol violation just before the sender closes the connection.
public struct ErrorMessage: Codable, Sendable, Equatable {
    /// What kind of violation.
    public var code: ProtocolErrorCode
    /// What exactly was wrong.
    public var message: String
    /// The id of the message concerned, when known.
    public var id: MessageID?

    /// Creates an error message.
    public init(code: ProtocolErrorCode, message: String, id: MessageID? = nil) {
        self.code = code
        self.message = message
        self.id = id
    }

    private enum CodingKeys: String, CodingKey { case code, message, id }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        code = try c.decode(ProtocolErrorCode.self, forKey: .code)
        message = try c.decode(String.self, forKey: .message)
        id = try c.decodeIDIfPresent(forKey: .id)
    }
}
