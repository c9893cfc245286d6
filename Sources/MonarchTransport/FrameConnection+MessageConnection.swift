import MonarchLoop
import MonarchWire

/// The framed libuv connection as a ``MessageConnection``: each member hands on to the
/// connection or its stream, unchanged.
extension FrameConnection: MessageConnection {
    public func whenEnded(_ body: @escaping () -> Void) {
        onEnd = { _ in body() }
    }

    public var queuedWriteBytes: Int { stream.queuedWriteBytes }

    public var isWritable: Bool { stream.isWritable }

    public var onWritabilityChanged: ((Bool) -> Void)? {
        get { stream.onWritabilityChanged }
        set { stream.onWritabilityChanged = newValue }
    }

    public func closeAfterWrites() { stream.closeAfterWrites() }

    public var peerHost: String? { stream.peerHost }
}
