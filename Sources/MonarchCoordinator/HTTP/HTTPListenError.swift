import MonarchConfig
import MonarchLoop
import MonarchWire

/// An HTTP listener (`listen.http`) that could not be bound: its address and libuv's error.
/// Its description says what to do, and for a port in use names the port and the
/// configuration key (or, without a file, the environment variable) that moves it.
public struct HTTPListenError: Error, Sendable, CustomStringConvertible {
    /// The address asked for.
    public let address: SocketAddress
    /// Why it could not be bound.
    public let underlying: UVError

    /// The error of binding `address`.
    public init(address: SocketAddress, underlying: UVError) {
        self.address = address
        self.underlying = underlying
    }

    public var description: String {
        let start = "cannot serve HTTP on \(address) (listen.http)"
        guard underlying.name == "EADDRINUSE" else { return "\(start): \(underlying)" }
        let what = if case .tcp(_, let port) = address { "port \(port) is" } else { "the socket is" }
        return """
            \(start): \(what) already in use by another program (or another monarch up). Stop it, or \
            move the listener: listen.http in the configuration file, or for the embedded default \
            (no monarch.yml) \(Configuration.defaultHTTPVariable)=tcp:127.0.0.1:PORT (off: no HTTP)
            """
    }
}
