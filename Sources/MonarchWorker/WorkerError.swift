import MonarchLoop
import MonarchWire

/// Why a worker could not join, or stopped serving.
public enum WorkerError: Error, Sendable, CustomStringConvertible {
    /// The coordinator could not be reached.
    case cannotConnect(SocketAddress, String)
    /// The coordinator refused the worker's `hello`, or answered with something else.
    case refused(String)
    /// The connection ended by a protocol or I/O error.
    case connectionFailed(String)

    public var description: String {
        switch self {
        case .cannotConnect(let address, let why): "cannot reach the coordinator at \(address): \(why)"
        case .refused(let why): "the coordinator refused this worker: \(why)"
        case .connectionFailed(let why): "the connection to the coordinator failed: \(why)"
        }
    }
}
