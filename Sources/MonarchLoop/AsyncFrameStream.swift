import MonarchFraming
import Synchronization

/// A frame stream for async code: await the next frame, send frames, from any task. It knows
/// frames, not messages (MonarchTransport's `AsyncFrameConnection` reads and sends the wire
/// protocol's messages over it).
///
/// Inbound frames wait in a bounded buffer; when the reader falls behind, the connection
/// stops reading from the socket until it catches up. ``send(payload:)`` returns once the
/// frame is queued for the loop, and waits first while the socket's write queue, or the
/// frames handed to the loop and not yet written, are over the high watermark. Code running
/// on the connection's loop (an actor isolated to it, or a task preferring it as executor)
/// sends and receives without any thread hop.
public final class AsyncFrameStream: Sendable {
    /// The loop-level stream underneath.
    public let connection: FrameStream
    /// The connection's loop.
    public var loop: EventLoop { connection.loop }

    private let inbox = BoundedInbox<ReceivedFrame, FrameStream.End>(orderlyEnd: .closed)
    /// Holds senders back while the socket's write queue is over its high watermark.
    private let gate: SendGate

    /// Wraps a stream and starts reading. Loop thread only.
    public init(_ connection: FrameStream) {
        connection.loop.preconditionInEventLoop()
        self.connection = connection
        self.gate = SendGate(
            loop: connection.loop, highWatermark: connection.stream.writeHighWatermark,
            isOpen: { connection.isOpen }, isWritable: { connection.stream.isWritable })
        connection.onReceivedFrame = { [inbox] frame in
            if inbox.deliver(frame, size: frame.count) { connection.pause() }
        }
        connection.onEnd = { [inbox, gate] end in
            gate.ended(throwing: end)
            inbox.finish(end)
        }
        connection.stream.onWritabilityChanged = { [gate] isWritable in gate.writabilityChanged(isWritable) }
        connection.start()
    }

    /// Connects to `address` and wraps the stream.
    ///
    /// - Throws: ``UVError`` when the connection cannot be made.
    public static func connect(
        to address: SocketAddress, on loop: EventLoop, maxFrameBytes: Int = FrameDecoder.defaultMaxFrameBytes
    ) async throws -> AsyncFrameStream {
        let stream = try await StreamConnection.connect(to: address, on: loop)
        return try await loop.submit { AsyncFrameStream(FrameStream(stream: stream, maxFrameBytes: maxFrameBytes)) }
    }

    /// The next frame payload; nil once the peer closed in order and every frame was read.
    /// One task at a time may await it.
    ///
    /// - Throws: ``FrameStream/End`` when the stream ended by a framing or I/O error, or was
    ///   failed by this side; `CancellationError` when the task is cancelled.
    public func nextFrame() async throws -> [UInt8]? {
        try await nextReceivedFrame()?.array
    }

    /// The next frame as it came off the stream — a large one in its block, uncopied; nil once
    /// the peer closed in order and every frame was read. One task at a time may await it.
    ///
    /// - Throws: as ``nextFrame()``.
    public func nextReceivedFrame() async throws -> ReceivedFrame? {
        try await inbox.next { [connection] in
            connection.loop.execute { connection.resume() }
        }
    }

    /// Ends reading from this side: the frames still buffered are dropped, and the reader gets
    /// ``FrameStream/End/failed`` from now on. The layer above ends the stream on its loop
    /// (``FrameStream/fail()``) after its last words. Any thread.
    public func failReading() {
        inbox.fail(.failed)
    }

    /// Sends a frame holding `payload`, after the frames sent before it from the same task.
    ///
    /// - Throws: ``FrameError`` when the payload exceeds the frame limit,
    ///   ``FrameStream/End`` when the stream has ended, `CancellationError` when the task is
    ///   cancelled while waiting for the stream to drain.
    public func send(payload: [UInt8]) async throws {
        try await send(payloadCount: payload.count) { stream throws(FrameError) in try stream.send(payload: payload) }
    }

    /// Sends a frame made beforehand, after the frames sent before it from the same task:
    /// `frame` holds its length and its first bytes, `tail` (sent without a copy) the rest of
    /// its payload; nil when `frame` is the whole frame.
    ///
    /// - Throws: as ``send(payload:)``.
    public func send(frame: [UInt8], then tail: SharedBytes?) async throws {
        try await send(payloadCount: FrameStream.payloadCount(ofFrame: frame, then: tail)) { stream throws(FrameError) in try stream.send(frame: frame, then: tail) }
    }

    /// Sends a frame of `payloadCount` bytes by calling `write` on the loop, once the stream
    /// takes it: at once when it does, else after waiting for it to drain.
    private func send(payloadCount: Int, _ write: @escaping @Sendable (FrameStream) throws(FrameError) -> Void) async throws {
        let limit = connection.maxOutboundFrameBytes
        guard payloadCount <= limit else {
            throw FrameError.oversized(length: UInt32(clamping: payloadCount), limit: limit)
        }
        try await gate.send(bytes: payloadCount, closed: FrameStream.End.closed, to: connection, write)
    }

    /// Closes the connection and waits until it is closed.
    public func close() async {
        await connection.stream.closeAndWait()
    }
}
