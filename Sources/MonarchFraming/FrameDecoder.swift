/// Splits a byte stream into frames: a 4-byte big-endian length, then that many payload bytes.
///
/// Feed bytes as they arrive with ``append(_:)`` and take complete payloads with
/// ``nextFrame()``; a frame may arrive split across many reads and one read may hold many
/// frames. The decoder never reserves memory for an announced length: it only holds bytes
/// that have actually arrived, and rejects a length above ``maxFrameBytes`` from the header
/// alone. Not thread-safe: one decoder belongs to one connection.
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

    /// Creates a decoder that accepts payloads of up to `maxFrameBytes` bytes.
    public init(maxFrameBytes: Int = FrameDecoder.defaultMaxFrameBytes) {
        precondition(maxFrameBytes >= 0 && maxFrameBytes <= Int(UInt32.max), "maxFrameBytes out of range")
        self.maxFrameBytes = maxFrameBytes
    }

    /// The number of bytes received that do not yet form a complete frame.
    public var bufferedByteCount: Int { buffer.count - readIndex }

    /// Adds bytes read from the stream.
    public mutating func append(_ bytes: UnsafeRawBufferPointer) {
        compactIfWorthwhile()
        buffer.append(contentsOf: bytes)
    }

    /// Adds bytes read from the stream.
    public mutating func append(contentsOf bytes: some Sequence<UInt8>) {
        compactIfWorthwhile()
        buffer.append(contentsOf: bytes)
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
        let available = buffer.count - readIndex
        guard available >= 4 else { return nil }
        let length = buffer.withUnsafeBytes { BigEndianLength.read($0, at: readIndex) }
        guard Int(length) <= maxFrameBytes else {
            throw .oversized(length: length, limit: maxFrameBytes)
        }
        guard available - 4 >= Int(length) else { return nil }
        let start = readIndex + 4
        let result = buffer.withUnsafeBytes { bytes in body(UnsafeRawBufferPointer(rebasing: bytes[start..<start + Int(length)])) }
        readIndex = start + Int(length)
        if readIndex == buffer.count {
            buffer.removeAllKeepingSmallCapacity()
            readIndex = 0
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
