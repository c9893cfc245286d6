import MonarchLoop
import MonarchWire

/// A stream that speaks the wire protocol's messages: over a ``FrameStream`` (which knows only
/// frames), it decodes what arrives into messages (or hands over the frame payloads) and
/// encodes what is sent.
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

        /// How a connection ended whose frames ended with `end`; `violation` is what this side
        /// failed it for, when it did.
        init(_ end: FrameStream.End, violation: ProtocolError?) {
            switch end {
            case .closed: self = .closed
            case .framingError(let error): self = .protocolError(ProtocolError(error))
            case .failed: self = violation.map(End.protocolError) ?? .closed
            case .ioError(let error): self = .ioError(error)
            }
        }
    }

    /// The frames underneath.
    public let frames: FrameStream
    /// The stream under the frames.
    public var stream: StreamConnection { frames.stream }
    /// The connection's loop.
    public var loop: EventLoop { frames.loop }
    /// The message codec, with the connection's limit for frames it sends.
    public private(set) var codec: MessageCodec

    /// Each complete frame payload, in order, unless ``onMessage`` is set. Loop thread.
    public var onFrame: (@Sendable ([UInt8]) -> Void)? {
        get { frames.onFrame }
        set { frames.onFrame = newValue }
    }
    /// Each decoded message, in order, when set (takes precedence over ``onFrame``). Loop thread.
    public var onMessage: (@Sendable (WireMessage) -> Void)? {
        didSet {
            if onMessage == nil { frames.onReadable = nil } else { frames.onReadable = { self.readMessages() } }
        }
    }
    /// Called once when the connection has ended, with how. Loop thread.
    public var onEnd: (@Sendable (End) -> Void)?

    /// What this side failed the connection for, once it did.
    private var violation: ProtocolError?

    /// Wraps `stream`, accepting frames of up to `maxFrameBytes` payload bytes in both directions.
    /// Reading starts with ``start()``. Loop thread only.
    public init(stream: StreamConnection, maxFrameBytes: Int = FrameDecoder.defaultMaxFrameBytes) {
        self.frames = FrameStream(stream: stream, maxFrameBytes: maxFrameBytes)
        self.codec = MessageCodec(maxFrameBytes: maxFrameBytes)
        frames.farewell = { error in self.tell(ProtocolError(error)) }
        frames.onEnd = { end in self.ended(end) }
    }

    /// The largest payload accepted from the peer; frames announcing more end the connection
    /// with `oversizedFrame`. May be changed at any time (for example raised once a handshake
    /// is accepted); it applies to every frame not yet delivered. Loop thread only.
    public var maxInboundFrameBytes: Int {
        get { frames.maxInboundFrameBytes }
        set { frames.maxInboundFrameBytes = newValue }
    }

    /// The largest payload ``send(payload:)`` and ``send(_:)`` write (the peer's announced
    /// maximum, where it announced one). Loop thread only.
    public var maxOutboundFrameBytes: Int {
        get { codec.maxFrameBytes }
        set {
            codec.maxFrameBytes = newValue
            frames.maxOutboundFrameBytes = newValue
        }
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
    public func start() { frames.start() }
    /// Stops reading frames until ``resume()`` (backpressure towards the peer). Loop thread only.
    public func pause() { frames.pause() }
    /// Resumes reading frames. Loop thread only.
    public func resume() { frames.resume() }
    /// Whether the connection is open and has not begun to close.
    public var isOpen: Bool { frames.isOpen }

    /// Sends one frame holding `payload`. Loop thread only.
    ///
    /// - Throws: ``FrameError/oversized(length:limit:)`` when the payload exceeds the limit;
    ///   nothing is sent then.
    public func send(payload: some Collection<UInt8>) throws(FrameError) {
        try frames.send(payload: payload)
    }

    /// Sends one message. Loop thread only.
    ///
    /// - Throws: ``FrameError/oversized(length:limit:)`` when the encoded message exceeds the limit.
    public func send(_ message: WireMessage) throws(FrameError) {
        let codec = self.codec
        try frames.sendFrame { output throws(FrameError) in
            try codec.appendFrameHoldingBody(message, to: &output)
        }
    }

    /// Sends `prepared` answering request `id`: the frame ``send(_:)`` sends for its message
    /// with that id (and `ageMs` as its age, when given and the message has one), without
    /// encoding the message again. Loop thread only.
    ///
    /// - Throws: ``FrameError/oversized(length:limit:)`` when the frame exceeds the limit.
    public func send(_ prepared: PreparedResponse, answering id: MessageID, ageMs: UInt64? = nil) throws(FrameError) {
        let codec = self.codec
        try frames.sendFrame { output throws(FrameError) in
            try codec.appendFrameHoldingBody(prepared, answering: id, ageMs: ageMs, to: &output)
        }
    }

    /// The storage the connection's buffers hold, in bytes (for tests of what an idle
    /// connection keeps). Loop thread only.
    package var bufferCapacity: Int { frames.bufferCapacity }

    /// Reports `error` to the peer in an `error` message and closes once it is written; no
    /// frame after the one at fault is delivered, and nothing else is sent. Loop thread only.
    public func fail(_ error: ProtocolError) {
        guard violation == nil, frames.isOpen else { return }
        tell(error)
        violation = error
        frames.fail()
    }

    /// Closes the connection; frames already queued may not all be written. Any thread.
    public func close() { frames.close() }

    /// Sends `error` to the peer, the last thing it is sent.
    private func tell(_ error: ProtocolError) {
        loop.logger.debug("closing connection: \(LogText.sanitized("\(error)"))")
        try? send(.error(error.errorMessage))
    }

    /// Decodes the complete frames where they lie, each message delivered once the frames'
    /// decoder is free again.
    private func readMessages() {
        while onMessage != nil {
            let codec = self.codec
            guard let decoded = frames.nextFrame({ payload, block in
                Result { () throws(ProtocolError) in try codec.decode(payload, keeping: block) }
            }) else { return }
            switch decoded {
            case .success(let message): onMessage?(message)
            case .failure(let error): fail(error)
            }
        }
    }

    private func ended(_ end: FrameStream.End) {
        let onEnd = self.onEnd
        self.onEnd = nil
        onMessage = nil
        onEnd?(End(end, violation: violation))
    }
}
