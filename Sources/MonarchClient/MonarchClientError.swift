import Monarch
import MonarchWire

/// Why the coordinator gave no response.
public enum MonarchClientError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The chain failed: no provider answered, no route, deadline, cancelled, …
    case chain(ChainError)
    /// The coordinator could not be reached or refused the connection.
    case cannotConnect(String)
    /// The connection ended before the answer arrived.
    case connectionLost(String)
    /// The coordinator answered an admin request with an error.
    case adminFailed(String)

    public var description: String {
        switch self {
        case .chain(let error): "\(error)"
        case .cannotConnect(let why): "cannot connect to the coordinator: \(why)"
        case .connectionLost(let why): "lost the connection to the coordinator: \(why)"
        case .adminFailed(let why): why
        }
    }
}
