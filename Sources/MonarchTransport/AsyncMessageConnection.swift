import MonarchLoop
import MonarchWire

/// A ``MessageConnection`` for async code: await the next message, send messages, from any
/// task — whatever carries them (frames on a socket, ``FrameConnection``; or memory,
/// ``InMemoryConnection``).
///
/// The workers and the client library talk to the coordinator through it. Its promises, kept
/// by ``BoundedInbox`` and ``SendGate`` (as ``AsyncFrameConnection`` keeps them for frames):
/// - received messages wait in a bounded buffer, counted by ``WireMessage/estimatedFrameBytes``:
///   once the reader is more than 4 MiB behind, the connection pauses (its peer is held back)
///   until the reader is down to 1 MiB;
/// - a message sent goes out after the messages sent before it from the same task; a sender
///   waits (cancellably) while the connection is not writable, or while what other threads
///   handed to the loop and the loop has not sent yet is over the write high watermark;
/// - code running on the connection's loop sends and receives without any thread hop.
///
/// On a framed connection, a message sent from another thread is encoded by the sending task,
/// the loop only copying its frame into the write buffer; sent on the loop, it is encoded in
/// the write buffer itself.
public final class AsyncMessageConnection: Sendable {
    /// The loop-level connection underneath.
    public let connection: any MessageConnection
    /// The connection's loop.
    public var loop: EventLoop { connection.loop }

    private let inbox = BoundedInbox<WireMessage, ConnectionEnd>(orderlyEnd: .closed)
    private let gate: SendGate
    /// The connection when it is framed: senders on other threads encode for it.
    private let framed: FrameConnection?

    /// Wraps `connection` and starts reading; `writeHighWatermark` bounds what senders on other
    /// threads hand to the loop before they wait (a framed connection's stream's own watermark
    /// is used instead). Loop thread only.
    public init(_ connection: any MessageConnection, writeHighWatermark: Int = 1 << 20) {
        connection.loop.preconditionInEventLoop()
        self.connection = connection
        let framed = connection as? FrameConnection
        self.framed = framed
        self.gate = SendGate(
            loop: connection.loop, highWatermark: framed?.stream.writeHighWatermark ?? writeHighWatermark,
            isOpen: { connection.isOpen }, isWritable: { connection.isWritable })
        connection.onMessage = { [inbox] message in Self.deliver(message, to: inbox, of: connection) }
        connection.whenEnded { [inbox, gate] end in
            gate.ended(throwing: end)
            inbox.finish(end)
        }
        connection.onWritabilityChanged = { [gate] isWritable in gate.writabilityChanged(isWritable) }
        connection.start()
    }

    /// Connects to `address` on `loop` and wraps the framed stream.
    ///
    /// - Throws: ``UVError`` when the connection cannot be made,
    ///   ``EventLoopError/shutDown(loop:)`` when the loop takes no more work.
    public static func connect(to address: SocketAddress, on loop: EventLoop) async throws -> AsyncMessageConnection {
        let stream = try await StreamConnection.connect(to: address, on: loop)
        do {
            return try await loop.submit { AsyncMessageConnection(FrameConnection(stream: stream)) }
        } catch {
            stream.close()
            throw error
        }
    }

    /// Adopts what the coordinator's `welcome` announced (``FrameConnection/adopt(_:)``) when
    /// the connection is framed; a connection in memory has nothing to adopt. Call it before
    /// sending anything after the hello.
    ///
    /// - Throws: ``EventLoopError/shutDown(loop:)`` when the loop takes no more work.
    public func adopt(_ welcome: Welcome) async throws {
        guard let framed else { return }
        try await loop.submit { framed.adopt(welcome) }
    }

    /// Hands each message that arrives from now on to `take`, on the loop thread, before any
    /// reader sees it: a message `take` returns true for is consumed there, with no task woken,
    /// and never reaches ``nextMessage()``; any other reaches it as before. The reader may so
    /// see a message after consumed ones that came later: take only messages whose order
    /// against the others does not matter. Loop thread only.
    public func takeMessagesOnLoop(_ take: @escaping @Sendable (WireMessage) -> Bool) {
        loop.preconditionInEventLoop()
        connection.onMessage = { [inbox, connection] message in
            if !take(message) { Self.deliver(message, to: inbox, of: connection) }
        }
    }

    /// Buffers `message` for the reader, pausing `connection` once the reader is too far behind.
    private static func deliver(
        _ message: WireMessage, to inbox: BoundedInbox<WireMessage, ConnectionEnd>, of connection: any MessageConnection
    ) {
        if inbox.deliver(message, size: message.estimatedFrameBytes) { connection.pause() }
    }

    /// The next message, in the order the peer sent them; nil once the connection closed in
    /// order and every message was read. One task at a time may await it.
    ///
    /// - Throws: ``ConnectionEnd`` when the connection ended otherwise (a protocol violation,
    ///   by either end; a failed transport), after the messages received before;
    ///   `CancellationError` when the task is cancelled.
    public func nextMessage() async throws -> WireMessage? {
        try await inbox.next { [connection] in
            connection.loop.execute { connection.resume() }
        }
    }

    /// Sends `message`, after the messages sent before it from the same task; from another
    /// thread, returns once it is handed to the loop.
    ///
    /// - Throws: ``FrameError/oversized(length:limit:)`` when it does not fit in a frame the
    ///   peer accepts (nothing is sent); ``ConnectionEnd/closed`` when the connection has
    ///   ended; ``EventLoopError/shutDown(loop:)`` when the loop takes no more work;
    ///   `CancellationError` when the task is cancelled while waiting for the connection to drain.
    public func send(_ message: WireMessage) async throws {
        if let framed, !loop.inEventLoop {
            var encoded: [UInt8] = []
            let body = try framed.codec.appendFrameHoldingBody(message, to: &encoded)
            let frame = encoded
            try await gate.send(bytes: FrameStream.payloadCount(ofFrame: frame, then: body), closed: ConnectionEnd.closed, to: framed.frames) { frames throws(FrameError) in
                try frames.send(frame: frame, then: body)
            }
            return
        }
        try await gate.send(bytes: message.estimatedFrameBytes, closed: ConnectionEnd.closed, to: connection) {
            connection throws(FrameError) in try connection.send(message)
        }
    }

    /// Sends `message` at once when called on the connection's loop thread with the connection
    /// open and writable: encoded, on a framed connection, straight into its write buffer.
    /// Returns false, sending nothing, otherwise (then ``send(_:)`` waits as it must).
    ///
    /// - Throws: ``FrameError/oversized(length:limit:)`` when it does not fit in a frame the
    ///   peer accepts; nothing is sent then.
    public func sendAtOnce(_ message: WireMessage) throws(FrameError) -> Bool {
        guard gate.canWriteAtOnce else { return false }
        try connection.send(message)
        return true
    }

    /// Closes the connection: the reader gets the end once it has ended. Any thread.
    public func close() {
        connection.close()
    }
}
