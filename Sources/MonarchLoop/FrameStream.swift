import MonarchFraming

/// A stream that speaks frames: it splits what arrives into frame payloads and frames what is
/// sent. It knows bytes and frames, not what they mean: the layer above (MonarchTransport's
/// `FrameConnection` for the wire protocol's messages) reads the payloads and decides what to
/// tell a peer whose bytes break the framing (``farewell``).
///
/// A framing defect (a frame over the limit, a stream ending inside a frame) ends the stream:
/// ``farewell`` may send a last frame, then the stream closes once it is written. Other
/// connections are never affected. Loop thread only, except ``close()``.
public final class FrameStream: @unchecked Sendable {
    /// How a stream ended.
    public enum End: Error, Sendable, Equatable, CustomStringConvertible {
        /// Closed in order: by this side, or by the peer on a frame boundary.
        case closed
        /// The peer's bytes broke the framing.
        case framingError(FrameError)
        /// This side ended it with ``fail()`` (the layer above knows why).
        case failed
        /// The socket failed.
        case ioError(UVError)

        public var description: String {
            switch self {
            case .closed: "connection closed"
            case .framingError(let error): "framing error: \(error)"
            case .failed: "ended by this side"
            case .ioError(let error): "I/O error: \(error)"
            }
        }
    }

    /// The stream under the frames.
    public let stream: StreamConnection
    /// The stream's loop.
    public var loop: EventLoop { stream.loop }

    /// Each complete frame payload, in order, unless ``onReadable`` is set. Loop thread.
    public var onFrame: (@Sendable ([UInt8]) -> Void)?
    /// When set, takes the place of ``onFrame`` for every frame: a large one comes in the block
    /// it was gathered in, with no copy (``ReceivedFrame/block(_:)``). Loop thread.
    public var onReceivedFrame: (@Sendable (ReceivedFrame) -> Void)?
    /// Told that bytes arrived, when set (it takes precedence over ``onFrame``): the layer above
    /// then takes the complete frames itself with ``nextFrame(_:)``, reading each payload where
    /// it lies. Loop thread.
    public var onReadable: (@Sendable () -> Void)?
    /// Called once when the stream has ended, with how. Loop thread.
    public var onEnd: (@Sendable (End) -> Void)?
    /// Called when the peer's bytes broke the framing, before the stream ends: it may still send
    /// (the wire protocol's `error` message). Loop thread.
    public var farewell: (@Sendable (FrameError) -> Void)?

    /// The largest payload ``send(payload:)`` writes (the peer's announced maximum, where it
    /// announced one). Loop thread only.
    public var maxOutboundFrameBytes: Int

    private var decoder: FrameDecoder
    private var endReason: End?
    private var scratch: [UInt8] = []

    /// Wraps `stream`, accepting frames of up to `maxFrameBytes` payload bytes in both
    /// directions. Reading starts with ``start()``. Loop thread only.
    public init(stream: StreamConnection, maxFrameBytes: Int = FrameDecoder.defaultMaxFrameBytes) {
        stream.loop.preconditionInEventLoop()
        self.stream = stream
        self.maxOutboundFrameBytes = maxFrameBytes
        self.decoder = FrameDecoder(maxFrameBytes: maxFrameBytes)
        stream.onRead = { bytes in self.received(bytes) }
        // The rest of a large frame is read straight into its block.
        stream.readRoom = { [unowned self] in decoder.readRoom() }
        stream.onEnd = { error in self.streamEnded(error) }
    }

    /// The largest payload accepted from the peer; frames announcing more end the stream with a
    /// framing error. May be changed at any time (for example raised once a handshake is
    /// accepted); it applies to every frame not yet delivered. Loop thread only.
    public var maxInboundFrameBytes: Int {
        get { decoder.maxFrameBytes }
        set { decoder.maxFrameBytes = newValue }
    }

    /// Starts reading frames. Loop thread only.
    public func start() { stream.startReading() }
    /// Stops reading frames until ``resume()`` (backpressure towards the peer). Loop thread only.
    public func pause() { stream.stopReading() }
    /// Resumes reading frames. Loop thread only.
    public func resume() { stream.startReading() }
    /// Whether the stream is open and has not begun to close.
    public var isOpen: Bool { !stream.isClosing }

    /// Sends one frame holding `payload`; nothing once the stream failed. Loop thread only.
    ///
    /// - Throws: ``FrameError/oversized(length:limit:)`` when the payload exceeds
    ///   ``maxOutboundFrameBytes``; nothing is sent then.
    public func send(payload: some Collection<UInt8>) throws(FrameError) {
        guard endReason == nil else { return }
        scratch.removeAll(keepingCapacity: true)
        try FrameEncoder.append(payload: payload, to: &scratch, maxFrameBytes: maxOutboundFrameBytes)
        // Handed over, not copied, when nothing else waits to be written.
        stream.write(taking: &scratch)
    }

    /// The payload length of a frame made beforehand: `frame` (its length and first bytes), then
    /// `tail` (see ``send(frame:then:)``).
    public static func payloadCount(ofFrame frame: [UInt8], then tail: SharedBytes?) -> Int {
        frame.count - BigEndianLength.byteCount + (tail?.count ?? 0)
    }

    /// Sends a frame made beforehand: `frame` holds its length and its first bytes, `tail`
    /// (sent without a copy) the rest of its payload; nil when `frame` is the whole frame.
    /// Nothing once the stream failed. Loop thread only.
    ///
    /// - Throws: ``FrameError/oversized(length:limit:)`` when the payload exceeds
    ///   ``maxOutboundFrameBytes``; nothing is sent then.
    public func send(frame: [UInt8], then tail: SharedBytes?) throws(FrameError) {
        guard endReason == nil else { return }
        let payloadCount = Self.payloadCount(ofFrame: frame, then: tail)
        guard payloadCount <= maxOutboundFrameBytes else {
            throw .oversized(length: UInt32(clamping: payloadCount), limit: maxOutboundFrameBytes)
        }
        if let tail { stream.write(frame, then: tail) } else { stream.write(frame) }
    }

    /// Sends the frame whose first bytes `write` appends to an empty buffer and whose last bytes
    /// are those `write` returns, without copying those (nil: the bytes appended are the whole
    /// frame, or frames). Nothing is sent when it throws, or once the stream failed. Loop thread
    /// only.
    ///
    /// - Throws: what `write` throws.
    public func sendFrame(_ write: (inout [UInt8]) throws(FrameError) -> SharedBytes?) throws(FrameError) {
        guard endReason == nil else { return }
        scratch.removeAll(keepingCapacity: true)
        guard let tail = try write(&scratch) else {
            stream.write(taking: &scratch)
            return
        }
        stream.write(scratch, then: tail)
    }

    /// The next complete frame's payload, read where it lies by `body`; nil when no complete
    /// frame is there, or the stream ended or is closing. A framing defect ends the stream (see
    /// ``farewell``) and gives nil. Loop thread only; `body` must not touch the stream.
    public func nextFrame<Result>(_ body: (UnsafeRawBufferPointer) -> Result) -> Result? {
        nextFrame { bytes, _ in body(bytes) }
    }

    /// The next complete frame's payload, read where it lies by `body` with the block it lies
    /// in when it is a large one the decoder gave up (``FrameDecoder/nextFrame(_:)-(_)``):
    /// `body` may keep that block, and the bytes where they lie. Otherwise as
    /// ``nextFrame(_:)-(_)``. Loop thread only; `body` must not touch the stream.
    public func nextFrame<Result>(_ body: (UnsafeRawBufferPointer, FrameBlock?) -> Result) -> Result? {
        guard endReason == nil, !stream.isClosing else { return nil }
        do {
            return try decoder.nextFrame(body)
        } catch {
            endForFraming(error)
            return nil
        }
    }

    /// The storage the stream's buffers hold, in bytes: its decoder, its encoding scratch and
    /// its stream's write buffers (for tests of what an idle connection keeps). Loop thread only.
    package var bufferCapacity: Int { decoder.bufferCapacity + scratch.capacity + stream.writeBufferCapacity }

    /// Ends the stream from this side, once what was sent is written: no frame after the one
    /// being read is delivered, nothing else is sent, and the end is ``End/failed``. The layer
    /// above sends its last words first. Loop thread only.
    public func fail() {
        guard endReason == nil, !stream.isClosing else { return }
        endReason = .failed
        stream.closeAfterWrites()
    }

    /// Closes the stream; frames already queued may not all be written. Any thread.
    public func close() { stream.close() }

    private func received(_ bytes: UnsafeRawBufferPointer) {
        guard endReason == nil else { return }
        decoder.append(bytes)
        if let onReadable {
            onReadable()
            return
        }
        while endReason == nil, !stream.isClosing {
            let next: ReceivedFrame?
            do {
                next = try decoder.nextFrame { bytes, block in block.map(ReceivedFrame.block) ?? .bytes(Array(bytes)) }
            } catch {
                endForFraming(error)
                return
            }
            guard let frame = next else { return }
            if let onReceivedFrame { onReceivedFrame(frame) } else { onFrame?(frame.array) }
        }
    }

    /// Lets ``farewell`` speak, then ends the stream for the peer's framing defect.
    private func endForFraming(_ error: FrameError) {
        guard endReason == nil, !stream.isClosing else { return }
        farewell?(error)
        endReason = .framingError(error)
        stream.closeAfterWrites()
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
                    // The peer may still read: it is told, as for any other framing defect.
                    farewell?(error)
                    endReason = .framingError(error)
                }
            }
        }
        let end = endReason ?? .closed
        let onEnd = self.onEnd
        self.onEnd = nil
        onFrame = nil
        onReceivedFrame = nil
        onReadable = nil
        farewell = nil
        onEnd?(end)
    }
}
