import MonarchWire

/// How a ``MessageConnection`` ended, in terms that hold whatever carried it: a session reports
/// it (a worker's loss names it) without knowing sockets or frames.
public enum ConnectionEnd: Error, Sendable, Equatable, CustomStringConvertible {
    /// Closed in order: by this end, or by the peer after all it sent was delivered.
    case closed
    /// A protocol violation: by the peer when it arrived, by this end when it failed the
    /// connection (``MessageConnection/fail(_:)``).
    case protocolError(ProtocolError)
    /// What carried the messages failed (a socket's I/O error), as that transport describes it.
    case transportFailed(String)

    /// The end as logs and lost workers' reasons put it: `connection closed`,
    /// `protocol error: …`, or the transport's own description of its failure.
    public var description: String {
        switch self {
        case .closed: "connection closed"
        case .protocolError(let error): "protocol error: \(error)"
        case .transportFailed(let failure): failure
        }
    }
}
