import MonarchFraming

/// A frame's payload as it came off the stream: bytes of its own, or — for a large frame — the
/// block the decoder gathered it in, handed over without a copy (``FrameBlock``).
public enum ReceivedFrame: Sendable {
    /// A payload copied out of the decoder's buffer.
    case bytes([UInt8])
    /// A large payload in the block it arrived in.
    case block(FrameBlock)

    /// The payload's length in bytes.
    public var count: Int {
        switch self {
        case .bytes(let bytes): bytes.count
        case .block(let block): block.bytes.count
        }
    }

    /// The payload as an array of its own (a copy for a block).
    public var array: [UInt8] {
        switch self {
        case .bytes(let bytes): bytes
        case .block(let block): Array(block.bytes)
        }
    }
}
