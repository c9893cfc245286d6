import DequeModule
import MonarchLoop
import MonarchWire

/// One end of a pair of connections in memory (``pair(on:)``), both on one loop: what one end
/// sends, the other receives as the very ``WireMessage`` value, never encoded or framed — as
/// swift-nio's `EmbeddedChannel` and grpc-swift's in-process transport let a test drive the
/// whole stack with no socket.
///
/// It keeps a socket's promises (``MessageConnection``):
/// - messages arrive in the order they were sent, each on a later turn of the loop than its
///   send (never inside the sender's call);
/// - what one end sent and the other has not taken yet waits in a queue counted in bytes (an
///   estimate of each message's frame, ``estimatedSize(of:)``): while the receiving end is
///   paused (or not started), it grows, and the sending end's ``isWritable`` turns false once it
///   holds more than ``writeHighWatermark`` bytes, true again once it is down to
///   ``writeLowWatermark`` — a `FrameConnection`'s stream does the same;
/// - a prepared response arrives as its message with the request's id, and the age given;
/// - either end may close: the other still receives what was sent before, then ends.
///   ``fail(_:)`` sends an `error` message first, as a `FrameConnection` does.
///
/// Loop thread only, except ``close()``.
public final class InMemoryConnection: MessageConnection, @unchecked Sendable {
    /// How an end ended: ``ConnectionEnd/closed`` (by this end or by the peer), or
    /// ``ConnectionEnd/protocolError(_:)`` when this end failed it (``fail(_:)``); never a
    /// failed transport.
    public typealias End = ConnectionEnd

    public let loop: EventLoop

    /// The other end; nil once this end has ended.
    private var peer: InMemoryConnection?

    /// Messages the peer sent that this end has not delivered yet, with their sizes.
    private var inbox: Deque<(message: WireMessage, size: Int)> = []
    /// The sum of the sizes in ``inbox``: the peer's ``queuedWriteBytes``.
    private var inboxBytes = 0
    /// Whether deliveries run (started and not paused).
    private var reading = false
    /// Whether a delivery is scheduled on the loop.
    private var deliveryScheduled = false
    /// Whether the peer has closed: once the inbox is delivered, this end ends.
    private var peerClosed = false
    /// Whether this end has begun to close.
    private var closing = false
    /// Whether this end has ended (its end callback called or due).
    private var ended = false
    /// What this end failed the connection for, once it did.
    private var violation: ProtocolError?
    private var endBody: (@Sendable (End) -> Void)?

    public var onMessage: (@Sendable (WireMessage) -> Void)?
    public var onWritabilityChanged: (@Sendable (Bool) -> Void)?
    public private(set) var isWritable = true
    /// Queued bytes above which ``isWritable`` turns false (as a stream's default: 1 MiB).
    public var writeHighWatermark = 1 << 20
    /// Queued bytes at or below which ``isWritable`` turns true again (256 KiB).
    public var writeLowWatermark = 256 << 10

    private init(loop: EventLoop) {
        self.loop = loop
    }

    /// Two connected ends on `loop`: what one sends, the other receives. Any thread; each end
    /// is then used on `loop`'s thread.
    public static func pair(on loop: EventLoop) -> (InMemoryConnection, InMemoryConnection) {
        let first = InMemoryConnection(loop: loop)
        let second = InMemoryConnection(loop: loop)
        first.peer = second
        second.peer = first
        return (first, second)
    }

    public var isOpen: Bool { !closing && !ended }

    public var peerHost: String? { nil }

    /// Called once, on the loop, when this end has ended, with how. Loop thread.
    public var onEnd: (@Sendable (End) -> Void)? {
        get { endBody }
        set { endBody = newValue }
    }

    public func whenEnded(_ body: @escaping @Sendable (ConnectionEnd) -> Void) {
        endBody = body
    }

    public func start() {
        loop.preconditionInEventLoop()
        reading = true
        scheduleDelivery()
    }

    public func pause() {
        loop.preconditionInEventLoop()
        reading = false
    }

    public func resume() { start() }

    public var queuedWriteBytes: Int { peer?.inboxBytes ?? 0 }

    /// Never throws: a message in memory is not limited by a frame's size.
    public func send(_ message: WireMessage) throws(FrameError) {
        loop.preconditionInEventLoop()
        guard isOpen, let peer else { return }
        peer.take(message, size: Self.estimatedSize(of: message))
        if isWritable, peer.inboxBytes > writeHighWatermark {
            isWritable = false
            onWritabilityChanged?(false)
        }
    }

    /// Sends `prepared`'s message with `id` as its id and, when `ageMs` is given and the
    /// message has an age, `ageMs` as its age. Never throws.
    public func send(_ prepared: PreparedResponse, answering id: MessageID, ageMs: UInt64? = nil) throws(FrameError) {
        var message = prepared.message
        message.id = id
        if let ageMs, message.ageMs != nil { message.ageMs = ageMs }
        try send(.response(message))
    }

    public func fail(_ error: ProtocolError) {
        loop.preconditionInEventLoop()
        guard violation == nil, isOpen else { return }
        try? send(.error(error.errorMessage))
        violation = error
        onMessage = nil
        close()
    }

    /// As ``close()``: what was sent before always reaches the peer.
    public func closeAfterWrites() { close() }

    /// Closes this end: nothing more is delivered to it, what it received and did not take is
    /// dropped; the peer still receives what this end sent, then ends. Both ends' end callbacks
    /// run on a later turn of the loop. Any thread.
    public func close() {
        guard loop.inEventLoop else {
            loop.execute { [self] in close() }
            return
        }
        guard !closing, !ended else { return }
        closing = true
        reading = false
        inbox.removeAll()
        inboxBytes = 0
        if let peer {
            peer.peerClosed = true
            peer.scheduleDelivery(evenIfPaused: true)
        }
        loop.execute { [self] in end() }
    }

    /// A size for `message` in bytes, near what its frame would take
    /// (``WireMessage/estimatedFrameBytes``), so that back-pressure and the answer window see
    /// what a socket would.
    public static func estimatedSize(of message: WireMessage) -> Int {
        message.estimatedFrameBytes
    }

    /// Queues `message`, sent by the peer.
    private func take(_ message: WireMessage, size: Int) {
        guard !closing, !ended else { return }
        inbox.append((message, size))
        inboxBytes += size
        scheduleDelivery()
    }

    /// Delivers the inbox on a later turn of the loop, unless one is scheduled; a paused end
    /// waits for its resume (unless `evenIfPaused`: to learn that the peer closed once it has
    /// nothing left to deliver).
    private func scheduleDelivery(evenIfPaused: Bool = false) {
        guard !deliveryScheduled, reading || evenIfPaused, !ended else { return }
        deliveryScheduled = true
        loop.execute { [self] in deliver() }
    }

    private func deliver() {
        deliveryScheduled = false
        while reading, !closing, let onMessage, let next = inbox.popFirst() {
            inboxBytes -= next.size
            peer?.peerTook()
            onMessage(next.message)
        }
        if peerClosed, inbox.isEmpty, !closing { close() }
    }

    /// The peer took messages this end sent: writable again once they are down to the low watermark.
    private func peerTook() {
        guard !isWritable, queuedWriteBytes <= writeLowWatermark else { return }
        isWritable = true
        onWritabilityChanged?(true)
    }

    private func end() {
        guard !ended else { return }
        ended = true
        closing = true
        onMessage = nil
        onWritabilityChanged = nil
        // The pair's cycle ends here, on each side.
        peer = nil
        let body = endBody
        endBody = nil
        body?(violation.map(End.protocolError) ?? .closed)
    }
}
