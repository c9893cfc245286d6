import MonarchWire
import Synchronization

/// A frame connection for async code: await the next frame or message, send frames and
/// messages, from any task.
///
/// Inbound frames wait in a bounded buffer; when the reader falls behind, the connection
/// stops reading from the socket until it catches up. ``send(payload:)`` returns once the
/// frame is queued for the loop, and waits first while the socket's write queue, or the
/// frames handed to the loop and not yet written, are over the high watermark. Code running
/// on the connection's loop (an actor isolated to it, or a task preferring it as executor)
/// sends and receives without any thread hop.
public final class AsyncFrameConnection: Sendable {
    /// The loop-level connection underneath.
    public let connection: FrameConnection
    /// The connection's loop.
    public var loop: EventLoop { connection.loop }

    private let inbox = FrameInbox()
    /// Mirrors the stream's writability and openness for senders on other threads.
    private let writable = Atomic<Bool>(true)
    private let open = Atomic<Bool>(true)
    /// Bytes handed to the loop by senders on other threads and not yet written to the stream.
    private let bytesInTransit = Atomic<Int>(0)
    /// Senders waiting for writability, by ticket; touched on the loop thread only.
    private let waitingSenders: LoopBound<[Int: CheckedContinuation<Void, any Error>]>
    private let nextTicket = Atomic<Int>(0)

    /// Wraps a connection and starts reading. Loop thread only.
    public init(_ connection: FrameConnection) {
        connection.loop.preconditionInEventLoop()
        self.connection = connection
        self.waitingSenders = LoopBound([:], loop: connection.loop)
        connection.onFrame = { [inbox] frame in
            if inbox.deliver(frame) { connection.pause() }
        }
        connection.onEnd = { [self] end in
            open.store(false, ordering: .releasing)
            inbox.finish(end)
            resumeWaitingSenders(throwing: end)
        }
        connection.stream.onWritabilityChanged = { [self] isWritable in
            writable.store(isWritable, ordering: .releasing)
            if isWritable { resumeWaitingSenders(throwing: nil) }
        }
        connection.start()
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
        try await inbox.next { [connection] in
            connection.loop.execute { connection.resume() }
        }
    }

    /// The next message; nil once the peer closed in order.
    ///
    /// - Throws: ``ProtocolError`` when a frame does not decode: the peer is told, the
    ///   connection closes and no later frame is delivered. Otherwise what ``nextFrame()`` throws.
    public func nextMessage() async throws -> WireMessage? {
        guard let payload = try await nextFrame() else { return nil }
        do {
            return try connection.codec.decode(payload)
        } catch {
            inbox.fail(.protocolError(error))
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
        guard payload.count <= connection.codec.maxFrameBytes else {
            throw FrameError.oversized(length: UInt32(clamping: payload.count), limit: connection.codec.maxFrameBytes)
        }
        if loop.inEventLoop {
            try await sendOnLoop(payload)
            return
        }
        let inTransit = bytesInTransit.load(ordering: .acquiring)
        if writable.load(ordering: .acquiring) && open.load(ordering: .acquiring)
            && inTransit < connection.stream.writeHighWatermark
        {
            bytesInTransit.add(payload.count, ordering: .acquiringAndReleasing)
            let accepted = loop.enqueue(.closure { [self] in
                bytesInTransit.subtract(payload.count, ordering: .acquiringAndReleasing)
                try? connection.send(payload: payload)
            })
            if !accepted { throw EventLoopError.shutDown(loop: loop.name) }
            return
        }
        guard open.load(ordering: .acquiring) else { throw FrameConnection.End.closed }
        // Hopping onto the loop keeps this frame behind the ones queued before it, and the
        // wait for writability in this task, where cancelling the task reaches it.
        try await withTaskExecutorPreference(loop) { try await sendOnLoop(payload) }
    }

    /// Sends one message, after the frames sent before it from the same task.
    ///
    /// - Throws: as ``send(payload:)``.
    public func send(_ message: WireMessage) async throws {
        try await send(payload: connection.codec.encode(message))
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
        await connection.stream.closeAndWait()
    }

    /// Sends on the loop thread, first waiting while the stream is not writable.
    private func sendOnLoop(_ payload: [UInt8]) async throws {
        loop.preconditionInEventLoop()
        while connection.isOpen && !connection.stream.isWritable {
            try await waitForWritability()
        }
        guard connection.isOpen else { throw FrameConnection.End.closed }
        try connection.send(payload: payload)
    }

    /// Waits, on the loop thread, until the stream turns writable or ends.
    private func waitForWritability() async throws {
        let ticket = nextTicket.add(1, ordering: .relaxed).newValue
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                // The task may have hopped on its way here: the stream may have turned
                // writable or ended meanwhile, with nobody left to wake this sender.
                loop.preconditionInEventLoop()
                if Task.isCancelled {
                    continuation.resume(throwing: CancellationError())
                } else if connection.stream.isWritable || !connection.isOpen {
                    continuation.resume()
                } else {
                    waitingSenders.value[ticket] = continuation
                }
            }
        } onCancel: { [self] in
            loop.execute { [self] in
                waitingSenders.value.removeValue(forKey: ticket)?.resume(throwing: CancellationError())
            }
        }
    }

    /// Resumes every waiting sender: to retry when `error` is nil, else with the error.
    private func resumeWaitingSenders(throwing error: (any Error)?) {
        let senders = waitingSenders.value
        waitingSenders.value = [:]
        for sender in senders.values {
            if let error { sender.resume(throwing: error) } else { sender.resume() }
        }
    }
}
