/// Splits a byte stream into frames: a 4-byte big-endian length, then that many payload bytes.
///
/// Feed bytes as they arrive with ``append(_:)`` and take complete payloads with
/// ``nextFrame()``; a frame may arrive split across many reads and one read may hold many
/// frames. The decoder never reserves memory for an announced length: it only holds bytes
/// that have actually arrived (a large payload in a block of its own, ``FrameBlock``, whose
/// room is four times what arrived, or 256 KiB, at most), and rejects a length above ``maxFrameBytes``
/// from the header alone. Not thread-safe: one decoder belongs to one connection.
public struct FrameDecoder: Sendable {
    /// The default largest payload accepted: 16 MiB.
    public static let defaultMaxFrameBytes = 16 * 1024 * 1024

    /// The largest payload accepted, in bytes. It may change at any time (a connection accepts
    /// only small frames until its handshake is done): every frame not yet returned by
    /// ``nextFrame()`` is checked against the limit in force when it is asked for.
    public var maxFrameBytes: Int {
        didSet { precondition(maxFrameBytes >= 0 && maxFrameBytes <= Int(UInt32.max), "maxFrameBytes out of range") }
    }

    private var buffer: [UInt8] = []
    private var readIndex = 0
    /// The next frame, when it is a large one whose payload has been arriving into a block of
    /// its own (``FrameBlock``) since its header came.
    private var largeFrame: FrameBlock?

    /// The shortest payload gathered into a block of its own (``FrameBlock``) as it arrives,
    /// and handed over with it by ``nextFrame(_:)-(_)``.
    public static let blockMinimum = 64 << 10

    /// Creates a decoder that accepts payloads of up to `maxFrameBytes` bytes.
    public init(maxFrameBytes: Int = FrameDecoder.defaultMaxFrameBytes) {
        precondition(maxFrameBytes >= 0 && maxFrameBytes <= Int(UInt32.max), "maxFrameBytes out of range")
        self.maxFrameBytes = maxFrameBytes
    }

    /// The number of bytes received that do not yet form a complete frame.
    public var bufferedByteCount: Int { buffer.count - readIndex + (largeFrame.map { 4 + $0.count } ?? 0) }

    /// Adds bytes read from the stream.
    public mutating func append(_ bytes: UnsafeRawBufferPointer) {
        var bytes = bytes
        if let largeFrame, !largeFrame.isComplete {
            bytes = UnsafeRawBufferPointer(rebasing: bytes[largeFrame.fill(from: bytes)...])
            if bytes.isEmpty { return }
        }
        compactIfWorthwhile()
        buffer.append(contentsOf: bytes)
        gatherLargeFrame()
    }

    /// Adds bytes read from the stream.
    public mutating func append(contentsOf bytes: some Sequence<UInt8>) {
        Array(bytes).withUnsafeBytes { append($0) }
    }

    /// Room for the next bytes of the large frame under way (``FrameBlock``), no more than it
    /// still lacks: a read made into it, then handed to ``append(_:)`` where it lies, is taken
    /// without a copy. Nil when no large frame is under way.
    public mutating func readRoom() -> UnsafeMutableRawBufferPointer? {
        guard let largeFrame, !largeFrame.isComplete else { return nil }
        return largeFrame.spareRoom()
    }

    /// Moves the next frame's payload into a block of its own (``FrameBlock``) when it is large,
    /// within the limit, and still arriving: its bytes go there from now on.
    private mutating func gatherLargeFrame() {
        let available = buffer.count - readIndex
        guard largeFrame == nil, available >= 4 else { return }
        let length = Int(buffer.withUnsafeBytes { BigEndianLength.read($0, at: readIndex) })
        guard length >= Self.blockMinimum, length <= maxFrameBytes, available - 4 < length else { return }
        let block = FrameBlock(length: length, arrived: available - 4)
        _ = buffer.withUnsafeBytes { block.fill(from: UnsafeRawBufferPointer(rebasing: $0[(readIndex + 4)...])) }
        largeFrame = block
        buffer.removeAllKeepingSmallCapacity()
        readIndex = 0
    }

    /// Returns the next complete payload, or nil when more bytes are needed.
    ///
    /// - Throws: ``FrameError/oversized(length:limit:)`` when the next header announces more
    ///   than ``maxFrameBytes``. After an error the stream is unusable: close it.
    public mutating func nextFrame() throws(FrameError) -> [UInt8]? {
        try nextFrame { Array($0) }
    }

    /// Hands the next complete payload to `body` where it lies (the bytes are valid during the
    /// call only) and returns what `body` returns, or nil when more bytes are needed.
    ///
    /// - Throws: ``FrameError/oversized(length:limit:)`` when the next header announces more
    ///   than ``maxFrameBytes``. After an error the stream is unusable: close it.
    public mutating func nextFrame<Result>(_ body: (UnsafeRawBufferPointer) -> Result) throws(FrameError) -> Result? {
        try nextFrame { bytes, _ in body(bytes) }
    }

    /// Hands the next complete payload to `body`, as ``nextFrame(_:)-(_)`` does, with the block
    /// it lies in when it is a large one (``blockMinimum``) the decoder gave up: then `body`
    /// (and what it makes of the payload) may keep the block, and the bytes where they lie, as
    /// long as it likes; nil when the payload lies in the decoder's buffer.
    ///
    /// - Throws: ``FrameError/oversized(length:limit:)`` when the next header announces more
    ///   than ``maxFrameBytes``. After an error the stream is unusable: close it.
    public mutating func nextFrame<Result>(_ body: (UnsafeRawBufferPointer, FrameBlock?) -> Result) throws(FrameError) -> Result? {
        if let block = largeFrame {
            guard block.length <= maxFrameBytes else {
                throw .oversized(length: UInt32(block.length), limit: maxFrameBytes)
            }
            guard block.isComplete else { return nil }
            largeFrame = nil
            let result = body(block.bytes, block)
            gatherLargeFrame()
            return result
        }
        let available = buffer.count - readIndex
        guard available >= 4 else { return nil }
        let length = buffer.withUnsafeBytes { BigEndianLength.read($0, at: readIndex) }
        guard Int(length) <= maxFrameBytes else {
            throw .oversized(length: length, limit: maxFrameBytes)
        }
        guard available - 4 >= Int(length) else { return nil }
        let start = readIndex + 4
        let result = buffer.withUnsafeBytes { bytes in body(UnsafeRawBufferPointer(rebasing: bytes[start..<start + Int(length)]), nil) }
        readIndex = start + Int(length)
        if readIndex == buffer.count {
            buffer.removeAllKeepingSmallCapacity()
            readIndex = 0
        } else {
            gatherLargeFrame()
        }
        return result
    }

    /// The storage the decoder holds, in bytes (for tests of what an idle connection keeps).
    package var bufferCapacity: Int { buffer.capacity }

    /// Declares the end of the stream.
    ///
    /// - Throws: ``FrameError/truncated(expected:received:)`` when bytes of an incomplete frame
    ///   remain; nothing when the stream ended on a frame boundary.
    public func finish() throws(FrameError) {
        if let largeFrame, !largeFrame.isComplete {
            throw .truncated(expected: 4 + largeFrame.length, received: 4 + largeFrame.count)
        }
        let available = buffer.count - readIndex
        guard available > 0 else { return }
        guard available >= 4 else { throw .truncated(expected: 4, received: available) }
        let length = Int(buffer.withUnsafeBytes { BigEndianLength.read($0, at: readIndex) })
        throw .truncated(expected: 4 + length, received: available)
    }

    /// Drops consumed bytes once they are the larger part of the buffer, so the buffer stays
    /// proportional to what is still pending.
    private mutating func compactIfWorthwhile() {
        if readIndex > 0 && readIndex >= buffer.count / 2 {
            buffer.removeFirst(readIndex)
            readIndex = 0
        }
    }
}
