import MonarchWire

/// A stream that speaks frames: it splits what arrives into frame payloads (or messages) and
/// frames what is sent.
///
/// A framing defect, or a message that does not decode when ``onMessage`` is used, ends the
/// connection the protocol's way: an `error` message naming the defect is sent, then the
/// connection closes once it is written. Other connections are never affected.
/// Loop thread only, except ``close()``.
public final class FrameConnection: @unchecked Sendable {
    /// How a connection ended.
    public enum End: Error, Sendable, Equatable, CustomStringConvertible {
        /// Closed in order: by this side, or by the peer on a frame boundary.
        case closed
        /// A protocol violation; by the peer when it arrived, by this side when ``fail(_:)`` was called.
        case protocolError(ProtocolError)
        /// The socket failed.
        case ioError(UVError)

        public var description: String {
            switch self {
            case .closed: "connection closed"
            case .protocolError(let error): "protocol error: \(error)"
            case .ioError(let error): "I/O error: \(error)"
            }
        }
    }

    /// The stream under the frames.
    public let stream: StreamConnection
    /// The connection's loop.
    public var loop: EventLoop { stream.loop }
    /// The message codec, with the connection's limit for frames it sends.
    public private(set) var codec: MessageCodec

    /// Each complete frame payload, in order. Loop thread.
    public var onFrame: (([UInt8]) -> Void)?
    /// Each decoded message, in order, when set (takes precedence over ``onFrame``). Loop thread.
    public var onMessage: ((WireMessage) -> Void)?
    /// Called once when the connection has ended, with how. Loop thread.
    public var onEnd: ((End) -> Void)?

    private var decoder: FrameDecoder
    private var endReason: End?
    private var scratch: [UInt8] = []

    /// Wraps `stream`, accepting frames of up to `maxFrameBytes` payload bytes in both directions.
    /// Reading starts with ``start()``. Loop thread only.
    public init(stream: StreamConnection, maxFrameBytes: Int = FrameDecoder.defaultMaxFrameBytes) {
        stream.loop.preconditionInEventLoop()
        self.stream = stream
        self.codec = MessageCodec(maxFrameBytes: maxFrameBytes)
        self.decoder = FrameDecoder(maxFrameBytes: maxFrameBytes)
        stream.onRead = { bytes in self.received(bytes) }
        stream.onEnd = { error in self.streamEnded(error) }
    }

    /// The largest payload accepted from the peer; frames announcing more end the connection
    /// with `oversizedFrame`. May be changed at any time (for example raised once a handshake
    /// is accepted); it applies to every frame not yet delivered. Loop thread only.
    public var maxInboundFrameBytes: Int {
        get { decoder.maxFrameBytes }
        set { decoder.maxFrameBytes = newValue }
    }

    /// The largest payload ``send(payload:)`` and ``send(_:)`` write (the peer's announced
    /// maximum, where it announced one). Loop thread only.
    public var maxOutboundFrameBytes: Int {
        get { codec.maxFrameBytes }
        set { codec.maxFrameBytes = newValue }
    }

    /// Whether the connection uses the `rawBodies` extension (``WireFeature/rawBodies``): set
    /// once the handshake agreed to it, after which messages with a body go out as raw-body
    /// payloads and such payloads are accepted. Loop thread only.
    public var rawBodies: Bool {
        get { codec.rawBodies }
        set { codec.rawBodies = newValue }
    }

    /// Adopts what the listener's `welcome` announced: frames sent from now on keep to its
    /// ``Welcome/frameLimit`` and use the extensions it agreed to. Loop thread only.
    public func adopt(_ welcome: Welcome) {
        maxOutboundFrameBytes = welcome.frameLimit
        rawBodies = welcome.agreed(to: WireFeature.rawBodies)
    }

    /// Starts reading frames. Loop thread only.
    public func start() { stream.startReading() }
    /// Stops reading frames until ``resume()`` (backpressure towards the peer). Loop thread only.
    public func pause() { stream.stopReading() }
    /// Resumes reading frames. Loop thread only.
    public func resume() { stream.startReading() }
    /// Whether the connection is open and has not begun to close.
    public var isOpen: Bool { !stream.isClosing }

    /// Sends one frame holding `payload`. Loop thread only.
    ///
    /// - Throws: ``FrameError/oversized(length:limit:)`` when the payload exceeds the limit;
    ///   nothing is sent then.
    public func send(payload: some Collection<UInt8>) throws(FrameError) {
        // After a protocol error only the `error` message itself goes out.
        guard endReason == nil else { return }
        scratch.removeAll(keepingCapacity: true)
        try FrameEncoder.append(payload: payload, to: &scratch, maxFrameBytes: codec.maxFrameBytes)
        stream.write(scratch)
        scratch.removeAllKeepingSmallCapacity()
    }

    /// Sends one message. Loop thread only.
    ///
    /// - Throws: ``FrameError/oversized(length:limit:)`` when the encoded message exceeds the limit.
    public func send(_ message: WireMessage) throws(FrameError) {
        guard endReason == nil else { return }
        scratch.removeAll(keepingCapacity: true)
        try codec.appendFrame(message, to: &scratch)
        stream.write(taking: &scratch)
    }

    /// Sends `prepared` answering request `id`: the frame ``send(_:)`` sends for its message
    /// with that id (and `ageMs` as its age, when given and the message has one), without
    /// encoding the message again. Loop thread only.
    ///
    /// - Throws: ``FrameError/oversized(length:limit:)`` when the frame exceeds the limit.
    public func send(_ prepared: PreparedResponse, answering id: MessageID, ageMs: UInt64? = nil) throws(FrameError) {
        guard endReason == nil else { return }
        scratch.removeAll(keepingCapacity: true)
        try codec.appendFrame(prepared, answering: id, ageMs: ageMs, to: &scratch)
        stream.write(taking: &scratch)
    }

    /// The storage the connection's buffers hold, in bytes: its decoder, its encoding scratch
    /// and its stream's write buffers (for tests of what an idle connection keeps). Loop
    /// thread only.
    package var bufferCapacity: Int { decoder.bufferCapacity + scratch.capacity + stream.writeBufferCapacity }

    /// Reports `error` to the peer in an `error` message and closes once it is written; no
    /// frame after the one at fault is delivered, and nothing else is sent. Loop thread only.
    public func fail(_ error: ProtocolError) {
        guard endReason == nil, !stream.isClosing else { return }
        loop.logger.debug("closing connection: \(LogText.sanitized("\(error)"))")
        try? send(.error(error.errorMessage))
        endReason = .protocolError(error)
        stream.closeAfterWrites()
    }

    /// Closes the connection; frames already queued may not all be written. Any thread.
    public func close() { stream.close() }

    private func received(_ bytes: UnsafeRawBufferPointer) {
        guard endReason == nil else { return }
        decoder.append(bytes)
        do {
            while endReason == nil, !stream.isClosing {
                if let onMessage {
                    // Decoded where the frame lies; the message is delivered once the decoder is free again.
                    let codec = self.codec
                    guard let decoded = try decoder.nextFrame({ payload in
                        Result { () throws(ProtocolError) in try codec.decode(payload) }
                    }) else { break }
                    switch decoded {
                    case .success(let message): onMessage(message)
                    case .failure(let error): fail(error)
                    }
                } else {
                    guard let payload = try decoder.nextFrame() else { break }
                    onFrame?(payload)
                }
            }
        } catch {
            fail(ProtocolError(error))
        }
    }

    private func streamEnded(_ end: StreamEnd) {
        if endReason == nil {
            switch end {
            case .failed(let error):
                endReason = .ioError(error)
            case .closedLocally:
                endReason = .closed
            case .endOfFile:
                do {
                    try decoder.finish()
                    endReason = .closed
                } catch {
                    // The peer may still read: tell it, as for any other protocol error.
                    let violation = ProtocolError(error)
                    try? send(.error(violation.errorMessage))
                    endReason = .protocolError(violation)
                }
            }
        }
        let end = endReason ?? .closed
        let onEnd = self.onEnd
        self.onEnd = nil
        onFrame = nil
        onMessage = nil
        onEnd?(end)
    }
}
