import CHiredis

/// A Redis reply, copied out of hiredis's `redisReply` (which hiredis frees once the callback
/// returns).
enum RedisReply: Sendable, Equatable {
    /// A bulk string, as bytes.
    case string([UInt8])
    /// A status such as `OK`.
    case status(String)
    /// An error reply, such as `NOAUTH Authentication required.`.
    case error(String)
    /// An integer.
    case integer(Int64)
    /// A nil bulk string or array (`GET` of a missing key).
    case null
    /// An array of replies.
    case array([RedisReply])

    /// Copies the reply at `pointer`.
    init(_ pointer: UnsafePointer<redisReply>) {
        let reply = pointer.pointee
        switch reply.type {
        case REDIS_REPLY_STRING:
            self = .string(Self.bytes(reply))
        case REDIS_REPLY_STATUS:
            self = .status(String(decoding: Self.bytes(reply), as: UTF8.self))
        case REDIS_REPLY_ERROR:
            self = .error(String(decoding: Self.bytes(reply), as: UTF8.self))
        case REDIS_REPLY_INTEGER:
            self = .integer(Int64(reply.integer))
        case REDIS_REPLY_ARRAY:
            var elements: [RedisReply] = []
            elements.reserveCapacity(Int(reply.elements))
            for index in 0..<Int(reply.elements) {
                if let element = reply.element[index] { elements.append(RedisReply(element)) }
            }
            self = .array(elements)
        default:
            self = .null
        }
    }

    private static func bytes(_ reply: redisReply) -> [UInt8] {
        guard let string = reply.str, reply.len > 0 else { return [] }
        return Array(UnsafeRawBufferPointer(start: string, count: Int(reply.len)))
    }

    /// The bulk string's or status's text, if it is one.
    var text: String? {
        switch self {
        case .string(let bytes): String(decoding: bytes, as: UTF8.self)
        case .status(let text): text
        default: nil
        }
    }
}
