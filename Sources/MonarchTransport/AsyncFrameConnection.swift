#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import MonarchLoop
import MonarchWire
import Synchronization

/// A connection for async code that speaks the wire protocol's messages: await the next
/// frame or message, send frames and messages, from any task.
///
/// Its frames travel as ``AsyncFrameStream`` carries them: inbound frames wait in a bounded
/// buffer (reading pauses while the reader is behind), and senders wait while the socket's
/// write queue is over its high watermark. Code running on the connection's loop sends and
/// receives without any thread hop.
public final class AsyncFrameConnection: Sendable {
    /// The loop-level connection underneath.
    public let connection: FrameConnection
    /// Its frames, for async code.
    public let frames: AsyncFrameStream
    /// The connection's loop.
    public var loop: EventLoop { connection.loop }

    /// What a message that did not decode made this side fail the connection for.
    private let violation = Mutex<ProtocolError?>(nil)

    /// Wraps a connection and starts reading. Loop thread only.
    public init(_ connection: FrameConnection) {
        self.connection = connection
        self.frames = AsyncFrameStream(connection.frames)
    }

    /// Connects to `address` and wraps the stream.
    ///
    /// - Throws: ``UVError`` when the connection cannot be made.
    public static func connect(
        to address: SocketAddress, on loop: EventLoop, maxFrameBytes: Int = FrameDecoder.defaultMaxFrameBytes
    ) async throws -> AsyncFrameConnection {
        let stream = try await StreamConnection.connect(to: address, on: loop)
        return try await loop.submit {
            AsyncFrameConnection(FrameConnection(stream: stream, maxFrameBytes: maxFrameBytes))
        }
    }

    /// The next frame payload; nil once the peer closed in order and every frame was read.
    /// One task at a time may await it.
    ///
    /// - Throws: ``FrameConnection/End`` when the connection ended by a protocol or I/O
    ///   error, `CancellationError` when the task is cancelled.
    public func nextFrame() async throws -> [UInt8]? {
        try await nextReceivedFrame()?.array
    }

    /// The next frame as it came off the stream: a large one in its block, uncopied.
    private func nextReceivedFrame() async throws -> ReceivedFrame? {
        do {
            return try await frames.nextReceivedFrame()
        } catch let end as FrameStream.End {
            throw FrameConnection.End(end, violation: violation.withLock { $0 })
        }
    }

    /// The next message; nil once the peer closed in order.
    ///
    /// - Throws: ``ProtocolError`` when a frame does not decode: the peer is told, the
    ///   connection closes and no later frame is delivered. Otherwise what ``nextFrame()`` throws.
    public func nextMessage() async throws -> WireMessage? {
        guard let frame = try await nextReceivedFrame() else { return nil }
        do {
            // A large frame's raw body is kept where it arrived, not copied out of its block.
            switch frame {
            case .bytes(let payload): return try connection.codec.decode(payload)
            case .block(let block): return try connection.codec.decode(block.bytes, keeping: block)
            }
        } catch {
            violation.withLock { $0 = $0 ?? error }
            frames.failReading()
            loop.execute { [connection] in connection.fail(error) }
            throw error
        }
    }

    /// Hands each message that arrives from now on to `take`, on the loop thread, decoded where
    /// its frame lies, before any reader sees it: a message `take` returns an action for is
    /// consumed there (the action runs at once, in order with the other messages consumed so)
    /// and never reaches ``nextMessage()``, with no copy of its frame and no task woken; any
    /// other message, and any frame that does not decode, reaches ``nextMessage()`` as before.
    /// The reader may so see a message after consumed ones that came later: take only
    /// messages whose order against the others does not matter. Loop thread only.
    public func takeMessagesOnLoop(_ take: @escaping @Sendable (WireMessage) -> (() -> Void)?) {
        loop.preconditionInEventLoop()
        frames.connection.onFrameInPlace = { [connection] bytes in
            // A frame that does not decode is left to the reader, which fails the connection
            // for it as for any other.
            guard let message = try? connection.codec.decode(bytes) else { return nil }
            return take(message)
        }
    }

    /// Sends a frame holding `payload`, after the frames sent before it from the same task.
    ///
    /// - Throws: ``FrameError`` when the payload exceeds the frame limit,
    ///   ``FrameConnection/End`` when the connection has ended, `CancellationError` when the
    ///   task is cancelled while waiting for the connection to drain.
    public func send(payload: [UInt8]) async throws {
        do {
            try await frames.send(payload: payload)
        } catch let end as FrameStream.End {
            throw FrameConnection.End(end, violation: violation.withLock { $0 })
        }
    }

    /// Sends a frame holding `payload` at once when called on the connection's loop thread with
    /// the connection open and writable; returns false, sending nothing, otherwise (then
    /// ``send(payload:)`` waits as it must). See ``AsyncFrameStream/sendAtOnce(payload:)``.
    ///
    /// - Throws: ``FrameError`` when the payload exceeds the frame limit.
    public func sendAtOnce(payload: [UInt8]) throws(FrameError) -> Bool {
        try frames.sendAtOnce(payload: payload)
    }

    /// Sends a frame made beforehand (see ``send(frame:then:)``) at once when called on the
    /// connection's loop thread with the connection open and writable; returns false, sending
    /// nothing, otherwise.
    ///
    /// - Throws: ``FrameError`` when the payload exceeds the frame limit.
    public func sendAtOnce(frame: [UInt8], then body: Data?) throws(FrameError) -> Bool {
        try frames.sendAtOnce(frame: frame, then: body.map(SharedBytes.holding))
    }

    /// Sends `message` at once, encoded where the connection gathers what it writes (no payload
    /// of its own is made), when called on the connection's loop thread with the connection
    /// open and writable; returns false, sending nothing, otherwise (then ``send(_:)`` waits as
    /// it must).
    ///
    /// - Throws: ``FrameError/oversized(length:limit:)`` when the encoded message exceeds the
    ///   frame limit; nothing is sent then.
    public func sendAtOnce(_ message: WireMessage) throws(FrameError) -> Bool {
        guard frames.canSendAtOnce else { return false }
        try connection.send(message)
        return true
    }

    /// Sends one message, after the frames sent before it from the same task.
    ///
    /// - Throws: as ``send(payload:)``.
    public func send(_ message: WireMessage) async throws {
        var frame: [UInt8] = []
        let body = try connection.codec.appendFrameLeavingBody(message, to: &frame)
        try await send(frame: frame, then: body)
    }

    /// Sends a frame made beforehand (``MessageCodec/appendFrameLeavingBody(_:to:)``), after the
    /// frames sent before it from the same task: `frame` holds its length and first bytes,
    /// `body` (sent without a copy) the rest; nil when `frame` is whole.
    ///
    /// - Throws: as ``send(payload:)``.
    public func send(frame: [UInt8], then body: Data?) async throws {
        try await frames.send(frame: frame, then: body.map(SharedBytes.holding))
    }

    /// Adopts what the listener's `welcome` announced (``FrameConnection/adopt(_:)``). Call it
    /// before sending anything after the hello.
    ///
    /// - Throws: ``EventLoopError`` when the loop has shut down.
    public func adopt(_ welcome: Welcome) async throws {
        try await loop.submit { [connection] in connection.adopt(welcome) }
    }

    /// Closes the connection and waits until it is closed.
    public func close() async {
        await frames.close()
    }
}
