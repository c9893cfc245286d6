/// What can be wrong with the framing of a byte stream, before any JSON is looked at.
public enum FrameError: Error, Equatable, Sendable, CustomStringConvertible {
    /// A frame announced `length` payload bytes, more than the receiver's `limit`.
    case oversized(length: UInt32, limit: Int)
    /// The stream ended inside a frame: `expected` bytes (header included) were announced
    /// or needed for the header, only `received` arrived.
    case truncated(expected: Int, received: Int)

    /// The payload's length in bytes: as announced when ``oversized(length:limit:)``, as
    /// expected (header included) when ``truncated(expected:received:)``.
    public var payloadLength: UInt32 {
        switch self {
        case .oversized(let length, _): length
        case .truncated(let expected, _): UInt32(clamping: expected)
        }
    }

    public var description: String {
        switch self {
        case .oversized(let length, let limit):
            return "frame of \(length) bytes exceeds the limit of \(limit) bytes"
        case .truncated(let expected, let received):
            return "stream ended inside a frame: \(received) of \(expected) bytes arrived"
        }
    }
}
