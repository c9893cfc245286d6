import MonarchLoop
import MonarchWire

/// The framed libuv connection as a ``MessageConnection``: each member hands on to the
/// connection or its stream, unchanged.
extension FrameConnection: MessageConnection {
    public func whenEnded(_ body: @escaping @Sendable (ConnectionEnd) -> Void) {
        onEnd = { end in body(ConnectionEnd(end)) }
    }

    public var queuedWriteBytes: Int { stream.queuedWriteBytes }

    public var isWritable: Bool { stream.isWritable }

    public var onWritabilityChanged: (@Sendable (Bool) -> Void)? {
        get { stream.onWritabilityChanged }
        set { stream.onWritabilityChanged = newValue }
    }

    public func closeAfterWrites() { stream.closeAfterWrites() }

    public var peerHost: String? { stream.peerHost }
}

extension ConnectionEnd {
    /// How a message connection ended whose frames ended with `end`: an I/O error becomes a
    /// failed transport, described as ``FrameConnection/End`` describes it.
    init(_ end: FrameConnection.End) {
        switch end {
        case .closed: self = .closed
        case .protocolError(let error): self = .protocolError(error)
        case .ioError: self = .transportFailed(end.description)
        }
    }
}
