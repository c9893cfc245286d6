import MonarchLoop
import MonarchWire

/// A connection that carries the wire protocol's messages, as a coordinator's session needs
/// it: whatever lies underneath (frames on a libuv stream, ``FrameConnection``; or the other
/// end of an in-memory pair, ``InMemoryConnection``), the session sends and receives
/// ``WireMessage`` values, in order, and is held back by the same back-pressure.
///
/// Every member runs on ``loop``'s thread only, except ``close()``; callbacks are called there.
public protocol MessageConnection: AnyObject, Sendable {
    /// The loop the connection runs on: its callbacks run on this loop's thread.
    var loop: EventLoop { get }

    /// Whether the connection is open and has not begun to close.
    var isOpen: Bool { get }

    /// Each message received, in the order the peer sent it, while the connection reads (after
    /// ``start()``, and not ``pause()``d). Setting it to nil stops deliveries. Loop thread.
    var onMessage: (@Sendable (WireMessage) -> Void)? { get set }

    /// Calls `body` once, on the loop, when the connection has ended (closed by either end, or
    /// failed), with how it ended; it replaces a body given before. No message is delivered
    /// after it. Loop thread.
    func whenEnded(_ body: @escaping @Sendable (ConnectionEnd) -> Void)

    /// Starts delivering received messages to ``onMessage``. Loop thread.
    func start()
    /// Stops delivering received messages until ``resume()``: the peer is held back once what
    /// it sent fills the connection (back-pressure towards the peer). Loop thread.
    func pause()
    /// Delivers received messages again after ``pause()``. Loop thread.
    func resume()

    /// Sends `message`, after every message sent before it; never blocks. Nothing is sent once
    /// the connection has begun to close. Loop thread.
    ///
    /// - Throws: ``FrameError/oversized(length:limit:)`` when the message does not fit in a
    ///   frame the peer accepts; nothing is sent then.
    func send(_ message: WireMessage) throws(FrameError)

    /// Sends `prepared` as the response to request `id`: the peer receives its message with
    /// `id` as its id and, when `ageMs` is given and the message has an age, `ageMs` as its age.
    /// Otherwise as ``send(_:)``. Loop thread.
    ///
    /// - Throws: ``FrameError/oversized(length:limit:)`` as ``send(_:)`` does.
    func send(_ prepared: PreparedResponse, answering id: MessageID, ageMs: UInt64?) throws(FrameError)

    /// What was sent and the peer has not taken yet, in bytes (for a connection that does not
    /// encode, an estimate of the frames it would have sent). Loop thread.
    var queuedWriteBytes: Int { get }
    /// Whether the peer takes what it is sent: false once ``queuedWriteBytes`` rose above the
    /// connection's high watermark, true again once it fell to its low watermark. Loop thread.
    var isWritable: Bool { get }
    /// Called on the loop each time ``isWritable`` changes, with its new value. Loop thread.
    var onWritabilityChanged: (@Sendable (Bool) -> Void)? { get set }

    /// Reports `error` to the peer in an `error` message and closes once it is sent; no message
    /// received after the one at fault is delivered. Loop thread.
    func fail(_ error: ProtocolError)
    /// Closes the connection once what was sent before has been handed on. Loop thread.
    func closeAfterWrites()
    /// Closes the connection; messages already sent may not all reach the peer. Any thread.
    func close()

    /// The peer's host when it is reached over TCP; nil on a Unix socket or in memory.
    var peerHost: String? { get }
}
