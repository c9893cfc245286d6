/// One message of the wire protocol; its JSON form carries the case name as `type`.
public enum WireMessage: Sendable, Equatable {
    case hello(Hello)
    case welcome(Welcome)
    case request(RequestMessage)
    case response(ResponseMessage)
    case miss(MissMessage)
    case failure(FailureMessage)
    case cancel(CancelMessage)
    case ping(PingMessage)
    case pong(PongMessage)
    case store(StoreMessage)
    case invalidate(InvalidateMessage)
    case status(StatusMessage)
    case scale(ScaleMessage)
    case result(ResultMessage)
    case error(ErrorMessage)
    case watch(WatchMessage)
    case unwatch(UnwatchMessage)
    case changed(ChangedMessage)
    case sharedChange(SharedChangeMessage)

    /// The message's `type` on the wire.
    public var type: String {
        switch self {
        case .hello: "hello"
        case .welcome: "welcome"
        case .request: "request"
        case .response: "response"
        case .miss: "miss"
        case .failure: "failure"
        case .cancel: "cancel"
        case .ping: "ping"
        case .pong: "pong"
        case .store: "store"
        case .invalidate: "invalidate"
        case .status: "status"
        case .scale: "scale"
        case .result: "result"
        case .error: "error"
        case .watch: "watch"
        case .unwatch: "unwatch"
        case .changed: "changed"
        case .sharedChange: "sharedChange"
        }
    }

    /// The exchange id the message carries, if any.
    public var id: MessageID? {
        switch self {
        case .hello, .welcome: nil
        case .request(let m): m.id
        case .response(let m): m.id
        case .miss(let m): m.id
        case .failure(let m): m.id
        case .cancel(let m): m.id
        case .ping(let m): m.id
        case .pong(let m): m.id
        case .store(let m): m.id
        case .invalidate(let m): m.id
        case .status(let m): m.id
        case .scale(let m): m.id
        case .result(let m): m.id
        case .error(let m): m.id
        case .watch(let m): m.id
        case .unwatch(let m): m.id
        // Not an exchange: it names its watch in `watch`.
        case .changed: nil
        // Not an exchange: it names its change in `change`.
        case .sharedChange: nil
        }
    }
}

extension WireMessage: Codable {
    private enum TypeKey: String, CodingKey { case type }

    /// Every `type` this protocol version knows.
    public static let knownTypes: Set<String> = [
        "hello", "welcome", "request", "response", "miss", "failure", "cancel", "ping", "pong",
        "store", "invalidate", "status", "scale", "result", "error", "watch", "unwatch", "changed",
        "sharedChange",
    ]

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: TypeKey.self)
        let type = try c.decode(String.self, forKey: .type)
        switch type {
        case "hello": self = .hello(try Hello(from: decoder))
        case "welcome": self = .welcome(try Welcome(from: decoder))
        case "request": self = .request(try RequestMessage(from: decoder))
        case "response": self = .response(try ResponseMessage(from: decoder))
        case "miss": self = .miss(try MissMessage(from: decoder))
        case "failure": self = .failure(try FailureMessage(from: decoder))
        case "cancel": self = .cancel(try CancelMessage(from: decoder))
        case "ping": self = .ping(try PingMessage(from: decoder))
        case "pong": self = .pong(try PongMessage(from: decoder))
        case "store": self = .store(try StoreMessage(from: decoder))
        case "invalidate": self = .invalidate(try InvalidateMessage(from: decoder))
        case "status": self = .status(try StatusMessage(from: decoder))
        case "scale": self = .scale(try ScaleMessage(from: decoder))
        case "result": self = .result(try ResultMessage(from: decoder))
        case "error": self = .error(try ErrorMessage(from: decoder))
        case "watch": self = .watch(try WatchMessage(from: decoder))
        case "unwatch": self = .unwatch(try UnwatchMessage(from: decoder))
        case "changed": self = .changed(try ChangedMessage(from: decoder))
        case "sharedChange": self = .sharedChange(try SharedChangeMessage(from: decoder))
        default: throw UnknownMessageType(type: type)
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: TypeKey.self)
        try c.encode(type, forKey: .type)
        switch self {
        case .hello(let m): try m.encode(to: encoder)
        case .welcome(let m): try m.encode(to: encoder)
        case .request(let m): try m.encode(to: encoder)
        case .response(let m): try m.encode(to: encoder)
        case .miss(let m): try m.encode(to: encoder)
        case .failure(let m): try m.encode(to: encoder)
        case .cancel(let m): try m.encode(to: encoder)
        case .ping(let m): try m.encode(to: encoder)
        case .pong(let m): try m.encode(to: encoder)
        case .store(let m): try m.encode(to: encoder)
        case .invalidate(let m): try m.encode(to: encoder)
        case .status(let m): try m.encode(to: encoder)
        case .scale(let m): try m.encode(to: encoder)
        case .result(let m): try m.encode(to: encoder)
        case .error(let m): try m.encode(to: encoder)
        case .watch(let m): try m.encode(to: encoder)
        case .unwatch(let m): try m.encode(to: encoder)
        case .changed(let m): try m.encode(to: encoder)
        case .sharedChange(let m): try m.encode(to: encoder)
        }
    }
}

/// Thrown while decoding when `type` names no known message.
struct UnknownMessageType: Error {
    var type: String
}
