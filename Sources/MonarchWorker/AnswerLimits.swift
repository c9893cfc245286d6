import MonarchWire

/// How large a worker's answers may be on its connection to the coordinator: the frame limit
/// the coordinator announced in its `welcome`, and the largest body that fits in a frame of
/// that size.
///
/// Bodies travel in base64 inside the JSON message, so a body of `B` bytes takes
/// `4 * ceil(B / 3)` bytes of the frame; ``envelopeReserve`` is kept back for everything else
/// (the message's other fields and the response's headers). A provider that limits its bodies
/// to ``maxBodyBytes`` fails an oversized body early, with a clear failure, instead of reading
/// or fetching it whole for an answer that cannot be sent; the runtime still checks every
/// answer against ``maxFrameBytes`` before sending it.
public struct AnswerLimits: Sendable, Equatable, CustomStringConvertible {
    /// The bytes of every frame kept back for the JSON envelope and the headers: 64 KiB
    /// (``FrameBodyRoom/envelopeReserve``).
    public static let envelopeReserve = FrameBodyRoom.envelopeReserve

    /// The limits when the coordinator announces none: the protocol's default frame of
    /// 16 MiB (16 777 216 bytes), which carries bodies of up to 12 533 760 bytes.
    public static let protocolDefault = AnswerLimits(maxFrameBytes: FrameDecoder.defaultMaxFrameBytes)

    /// The largest frame payload the worker sends, in bytes (at least 1, at most `UInt32.max`).
    public let maxFrameBytes: Int

    /// Limits for frames of at most `maxFrameBytes` payload bytes (clamped to
    /// `1...UInt32.max`, what a frame header can announce).
    public init(maxFrameBytes: Int) {
        self.maxFrameBytes = min(max(1, maxFrameBytes), Int(UInt32.max))
    }

    /// The limits a `welcome` announces: its `maxFrameBytes`, else the protocol's default.
    public init(welcome: Welcome) {
        self.init(maxFrameBytes: welcome.frameLimit)
    }

    /// The largest body, in bytes, whose base64 form and ``envelopeReserve`` fit in
    /// ``maxFrameBytes``; 0 when the frame is no larger than the reserve.
    public var maxBodyBytes: Int { Self.largestBody(fitting: maxFrameBytes) }

    /// The largest body, in bytes, whose base64 form (`4 * ceil(B / 3)` bytes) and
    /// ``envelopeReserve`` fit in a frame of `maxFrameBytes`; 0 when none does.
    public static func largestBody(fitting maxFrameBytes: Int) -> Int {
        FrameBodyRoom.largestBody(fitting: maxFrameBytes)
    }

    /// The frame limit and the body limit, for logs.
    public var description: String {
        "frames of up to \(maxFrameBytes) bytes, bodies of up to \(maxBodyBytes) bytes"
    }
}
