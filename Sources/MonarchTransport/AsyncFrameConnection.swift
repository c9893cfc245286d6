#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import MonarchLoop
import MonarchWire
import Synchronization

/// A framed connection for async code that offers its frames as well as its messages: await
/// the next frame or message, send frames and messages, from any task. For tools that work at
/// the frame level (the benchmarks, tests that send frames no encoder would make); code that
/// speaks only messages uses ``AsyncMessageConnection``, over any ``MessageConnection``.
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
        try await endingAsTheConnection { try await frames.nextReceivedFrame() }
    }

    /// Runs `body`, reporting an end of the frames as the connection's end (with the protocol
    /// error this side failed the connection for, if any).
    private func endingAsTheConnection<T>(_ body: () async throws -> T) async throws -> T {
        do {
            return try await body()
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

    /// Sends a frame holding `payload`, after the frames sent before it from the same task.
    ///
    /// - Throws: ``FrameError`` when the payload exceeds the frame limit,
    ///   ``FrameConnection/End`` when the connection has ended, `CancellationError` when the
    ///   task is cancelled while waiting for the connection to drain.
    public func send(payload: [UInt8]) async throws {
        try await endingAsTheConnection { try await frames.send(payload: payload) }
    }

    /// Sends one message, after the frames sent before it from the same task.
    ///
    /// - Throws: as ``send(payload:)``.
    public func send(_ message: WireMessage) async throws {
        var frame: [UInt8] = []
        let body = try connection.codec.appendFrameHoldingBody(message, to: &frame)
        try await endingAsTheConnection { try await frames.send(frame: frame, then: body) }
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
