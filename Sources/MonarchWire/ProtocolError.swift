/// The codes of protocol errors, as they travel in an `error` message (see Protocols/README.md).
public enum ProtocolErrorCode: String, Codable, Sendable, CaseIterable {
    /// A frame's announced length exceeds the receiver's maximum.
    case oversizedFrame
    /// The stream ended inside a frame.
    case truncatedFrame
    /// The payload is not valid UTF-8.
    case invalidUTF8
    /// The payload is not one JSON value (syntax error, trailing bytes, empty payload).
    case invalidJSON
    /// The payload is JSON but not an object.
    case notAnObject
    /// The object has no `type`, or its `type` is not a string.
    case missingType
    /// The `type` names no message of this protocol version.
    case unknownType
    /// A required field is absent.
    case missingField
    /// A field has the wrong JSON type or a value out of its range.
    case invalidField
    /// The peer speaks a protocol version this side does not.
    case unsupportedVersion
    /// The peer did not present a valid token where one is required.
    case unauthorized
    /// A valid message arrived where it does not belong (before `hello`, a second `hello`, …).
    case unexpectedMessage
}

/// A violation of the wire protocol: the connection that produced it gets an `error` message
/// and is closed. Carries the code and a message meant for the person debugging the peer.
public struct ProtocolError: Error, Equatable, Sendable, CustomStringConvertible {
    /// What kind of violation this is.
    public var code: ProtocolErrorCode
    /// What exactly was wrong, naming the field or byte count where one applies.
    public var message: String
    /// The id of the message concerned, when it could be read.
    public var id: MessageID?

    /// Creates a protocol error.
    public init(_ code: ProtocolErrorCode, _ message: String, id: MessageID? = nil) {
        self.code = code
        self.message = message
        self.id = id
    }

    /// The protocol error that a framing error amounts to.
    public init(_ frameError: FrameError) {
        switch frameError {
        case .oversized: self.init(.oversizedFrame, frameError.description)
        case .truncated: self.init(.truncatedFrame, frameError.description)
        }
    }

    /// The `error` message that reports this violation to the peer.
    public var errorMessage: ErrorMessage { ErrorMessage(code: code, message: message, id: id) }

    public var description: String { "\(code.rawValue): \(message)" }
}
