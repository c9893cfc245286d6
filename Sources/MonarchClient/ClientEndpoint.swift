import MonarchLoop
import MonarchTransport
import MonarchWire

/// Where a ``MonarchClient``'s connections lead: each connection (the first, and each after a
/// loss) is made from it.
enum ClientEndpoint: Sendable, CustomStringConvertible {
    /// A coordinator's socket, dialled on `loop` (a TCP host name resolved at each dial).
    case socket(SocketAddress, loop: EventLoop)
    /// A coordinator in this process, named `name` in errors: `connect` makes a connection
    /// it has accepted, whose first message is its welcome.
    case inProcess(name: String, connect: @Sendable () async throws -> any MessageConnection)

    /// The socket's address, or the in-process coordinator's name.
    var description: String {
        switch self {
        case .socket(let address, _): "\(address)"
        case .inProcess(let name, _): name
        }
    }
}
