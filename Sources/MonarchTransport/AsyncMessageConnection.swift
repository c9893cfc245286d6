import MonarchLoop
import MonarchWire

/// A ``MessageConnection`` for async code: await the next message, send messages, from any
/// task — whatever carries them (frames on a socket, ``FrameConnection``; or memory,
/// ``InMemoryConnection``).
///
/// It keeps ``AsyncFrameConnection``'s promises, with the same parts (``BoundedInbox``,
/// ``SendGate``):
/// - received messages wait in a bounded buffer, counted by ``WireMessage/estimatedFrameBytes``:
///   once the reader is more than 4 MiB behind, the connection pauses (its peer is held back)
///   until the reader is down to 1 MiB;
/// - a message sent goes out after the messages sent before it from the same task; a sender
///   waits (cancellably) while the connection is not writable, or while what other threads
///   handed to the loop and the loop has not sent yet is over the write high watermark;
/// - code running on the connection's loop sends and receives without any thread hop.
///
/// On a framed connection, a message sent from another thread is encoded by the sending task,
/// the loop only copying its frame into the write buffer, exactly as ``AsyncFrameConnection``
/// sends it; sent on the loop, it is encoded in the write buffer itself.
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
        connection.onMessage = { [inbox] message in
            if inbox.deliver(message, size: message.estimatedFrameBytes) { connection.pause() }
        }
        connection.whenEnded { [inbox, gate] end in
            gate.ended(throwing: end)
            inbox.finish(end)
        }
        connection.onWritabilityChanged = { [gate] isWritable in gate.writabilityChanged(isWritable) }
        connection.start()
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
            let body = try framed.codec.appendFrameLeavingBody(message, to: &encoded).map(SharedBytes.holding)
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

    /// Closes the connection: the reader gets the end once it has ended. Any thread.
    public func close() {
        connection.close()
    }
}
